import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  RouterProvider,
} from '@tanstack/react-router';
import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { Input, Select } from '../ui/input.tsx';
import { FilterBar, ListPage, useListPage } from './list-page.tsx';
import { choiceParam, listSearch, textParam, useFilterDraft } from './list-search.ts';

const fruitSearch = listSearch({ keyword: textParam, kind: choiceParam(['all', 'sweet', 'sour'], 'all') });
const FRUITS = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `fruit ${i + 1}` }));

/** A list page built only from the kit; `fetchPage` records what the page asked the server for. */
function FruitPage({ fetchPage }: { fetchPage: (query: object) => void }) {
  const list = useListPage(fruitSearch, 'fruits-test');
  const filter = useFilterDraft({ keyword: list.search.keyword, kind: list.search.kind });
  const query = { ...list.search, pageSize: list.pageSize };
  const fruits = useQuery({
    queryKey: ['fruits', query],
    queryFn: () => {
      fetchPage(query);
      const start = (query.page - 1) * query.pageSize;
      return { items: FRUITS.slice(start, start + query.pageSize), total: FRUITS.length };
    },
  });
  return (
    <ListPage
      title="Fruits"
      filters={
        <FilterBar
          onSubmit={() => list.apply(filter.draft)}
          onReset={() => {
            filter.discard();
            list.reset();
          }}
          submitLabel="Search"
          resetLabel="Reset"
        >
          <Input label="Keyword" {...filter.field('keyword')} />
          <Select
            label="Kind"
            {...filter.field('kind')}
            options={['all', 'sweet', 'sour'].map((v) => ({ value: v, label: v }))}
          />
        </FilterBar>
      }
      columns={[{ accessorKey: 'name', header: 'Name' }]}
      rows={fruits.data?.items ?? []}
      rowKey={(f) => f.id}
      paging={list.paging(fruits.data?.total ?? 0)}
    />
  );
}

const fieldValue = (label: string) => (screen.getByLabelText(label) as HTMLInputElement).value;

async function open(url: string) {
  const fetchPage = vi.fn();
  const root = createRootRoute();
  const fruits = createRoute({
    getParentRoute: () => root,
    path: '/fruits',
    validateSearch: fruitSearch.validate,
    component: () => <FruitPage fetchPage={fetchPage} />,
  });
  const history = createMemoryHistory({ initialEntries: [url] });
  const router = createRouter({ routeTree: root.addChildren([fruits]), history });
  render(
    <QueryClientProvider client={new QueryClient()}>
      <RouterProvider router={router as never} />
    </QueryClientProvider>,
  );
  await act(() => router.load());
  await screen.findByRole('heading', { name: 'Fruits' });
  return { router, history, fetchPage, lastQuery: () => fetchPage.mock.calls.at(-1)?.[0] };
}

describe('list-page kit', () => {
  it('opens with the filters and page of a link, shown in the form and sent to the server', async () => {
    const page = await open('/fruits?keyword=apple&kind=sour&page=2');
    await waitFor(() => expect(page.lastQuery()).toMatchObject({ keyword: 'apple', kind: 'sour', page: 2 }));
    expect(fieldValue('Keyword')).toBe('apple');
    expect(fieldValue('Kind')).toBe('sour');
    await screen.findByText('fruit 11');
  });

  it('writes applied filters to the URL from page 1, and Back brings the previous ones back into the form', async () => {
    const user = userEvent.setup();
    const page = await open('/fruits?page=3');
    await screen.findByText('fruit 21');
    await user.type(screen.getByLabelText('Keyword'), 'pear');
    await user.selectOptions(screen.getByLabelText('Kind'), 'sweet');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() =>
      expect(page.router.state.location.search).toEqual({ keyword: 'pear', kind: 'sweet' }),
    );
    await waitFor(() => expect(page.lastQuery()).toMatchObject({ keyword: 'pear', kind: 'sweet', page: 1 }));

    // typed but not applied: Back still restores what the URL held before
    await user.type(screen.getByLabelText('Keyword'), 's');
    act(() => page.history.back());
    await waitFor(() => expect(page.router.state.location.search).toEqual({ page: 3 }));
    await waitFor(() => expect(fieldValue('Keyword')).toBe(''));
    expect(fieldValue('Kind')).toBe('all');
    await waitFor(() => expect(page.lastQuery()).toMatchObject({ keyword: '', kind: 'all', page: 3 }));

    act(() => page.history.forward());
    await waitFor(() => expect(fieldValue('Keyword')).toBe('pear'));
  });

  it('turns pages in the URL and resets to a bare URL', async () => {
    const user = userEvent.setup();
    const page = await open('/fruits?keyword=fig');
    await screen.findByText('fruit 1');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(page.router.state.location.search).toEqual({ keyword: 'fig', page: 2 }));
    await user.click(screen.getByRole('button', { name: 'Reset' }));
    await waitFor(() => expect(page.router.state.location.search).toEqual({}));
    expect(fieldValue('Keyword')).toBe('');
  });

  it('falls back to the defaults for unreadable values, and reads a number-like keyword as text', async () => {
    const page = await open('/fruits?page=abc&kind=bitter&keyword=123');
    await waitFor(() => expect(page.lastQuery()).toMatchObject({ keyword: '123', kind: 'all', page: 1 }));
    expect(fieldValue('Keyword')).toBe('123');
    // the next change writes back only what differs from the defaults: the unreadable values are gone
    await userEvent.setup().click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(page.router.state.location.search).toEqual({ keyword: '123' }));
  });
});

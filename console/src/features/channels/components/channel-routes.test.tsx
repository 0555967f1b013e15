import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createMemoryHistory, createRouter, RouterProvider } from '@tanstack/react-router';
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { routeTree } from '../../../routeTree.gen.ts';
import { fakeServer, makeStatus } from '../../../testing/render.tsx';
import { channelView } from '../testing/channel-view.ts';

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });

const stored = channelView({ id: 7, name: 'eu-openai' });

function serve() {
  return fakeServer({
    'GET /api/status': () => ok(makeStatus()),
    'GET /api/channel/': () => ok({ items: [stored], total: 1, page: 1, page_size: 10 }),
    'GET /api/group/': () => ok(['default']),
    'GET /api/channel/models_enabled': () => ok(['gpt-4o']),
    'GET /api/channel/models': () => ok([{ id: 'gpt-4o' }]),
    'GET /api/channel/test/progress': () =>
      ok({ running: false, done: 0, total: 0, failed: 0, started_at: 0, finished_at: 0 }),
    'GET /api/channel/7': () => ok(stored),
  });
}

/** The console's own route tree (as main.tsx builds it), opened at `path`. */
async function openAt(path: string) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const router = createRouter({
    routeTree,
    context: { queryClient },
    history: createMemoryHistory({ initialEntries: [path] }),
  });
  render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router as never} />
    </QueryClientProvider>,
  );
  await router.load();
  return router;
}

describe('channel form addresses (spec 03 route table)', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('/channel/add opens an empty channel form, and closing it returns to /channel', async () => {
    serve();
    const router = await openAt('/channel/add');
    const sheet = within(await screen.findByTestId('channel-sheet'));
    expect(sheet.getByText('Add channel')).toBeTruthy();
    expect((sheet.getByLabelText('Name', { exact: true }) as HTMLInputElement).value).toBe('');
    await userEvent.click(sheet.getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/channel'));
    expect(screen.queryByTestId('channel-sheet')).toBeNull();
    expect(await screen.findByText('eu-openai')).toBeTruthy();
  });

  it('/channel/edit/{id} opens that channel in the form', async () => {
    const server = serve();
    const router = await openAt('/channel/edit/7');
    // The form replaces the loading sheet once the channel has arrived.
    const name = await screen.findByLabelText('Name', { exact: true });
    expect((name as HTMLInputElement).value).toBe('eu-openai');
    const sheet = within(screen.getByTestId('channel-sheet'));
    expect(sheet.getByText('Edit channel')).toBeTruthy();
    expect(server.callsTo('GET', '/api/channel/7')).toHaveLength(1);
    await userEvent.click(sheet.getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/channel'));
  });

  it('keeps an administrator-only address from a regular user', async () => {
    setSessionUser({ id: 2, username: 'bob', display_name: 'Bob', role: 1, status: 1, group: 'default' });
    serve();
    const router = await openAt('/channel/edit/7');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(screen.queryByTestId('channel-sheet')).toBeNull();
  });
});

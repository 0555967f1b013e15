import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../testing/render.tsx';
import { DataTable, type TableColumn, usePageSize } from '../data-table/data-table.tsx';
import { ConsoleLayout } from './console-layout.tsx';
import { Footer } from './footer.tsx';
import { isNewYearsDay, TopBar } from './top-bar.tsx';

const base = { id: 2, username: 'bob', display_name: '', status: 1, group: 'default' };
const withStatus = (overrides = {}) => ({
  'GET /api/status': () => ({ body: { success: true, data: makeStatus(overrides) } }),
});
const menuLabels = () =>
  Array.from(screen.getByTestId('side-menu').querySelectorAll('a')).map((a) => a.getAttribute('title'));

describe('side menu', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('hides admin items from a normal user and flag-gated items while their flags are off', async () => {
    setSessionUser({ ...base, role: 1 });
    fakeServer(withStatus());
    await renderScreen(() => <ConsoleLayout>page</ConsoleLayout>);
    expect(menuLabels()).toEqual([
      'Playground',
      'API tokens',
      'Usage log',
      'Batches',
      'Wallet',
      'Personal settings',
    ]);
  });

  it('shows the admin group to an admin and flag items when the status flags are on', async () => {
    setSessionUser({ ...base, role: 10 });
    localStorage.setItem('enable_data_export', 'true');
    localStorage.setItem('enable_drawing', 'true');
    localStorage.setItem('enable_task', 'true');
    fakeServer(withStatus());
    await renderScreen(() => <ConsoleLayout>page</ConsoleLayout>);
    expect(menuLabels()).toEqual([
      'Playground',
      'Dashboard',
      'API tokens',
      'Usage log',
      'Drawing log',
      'Task log',
      'Batches',
      'Channels',
      'Redemption codes',
      'Subscription plans',
      'User management',
      'System settings',
      'Wallet',
      'Personal settings',
    ]);
  });

  it('lists the saved chat links under Chat, linking to /chat/{index}', async () => {
    setSessionUser({ ...base, role: 1 });
    localStorage.setItem(
      'chats',
      JSON.stringify([{ 'Next Web': 'https://n.example/#/?key={key}' }, { Lobe: 'x' }]),
    );
    fakeServer(withStatus());
    await renderScreen(() => <ConsoleLayout>page</ConsoleLayout>);
    expect(menuLabels().slice(0, 3)).toEqual(['Playground', 'Next Web', 'Lobe']);
    expect(screen.getByTitle('Lobe').getAttribute('href')).toBe('/chat/1');
    expect(screen.getByText('Chat')).toBeTruthy();
  });

  it('turns the side menu into a drawer at 600 px and below', async () => {
    setSessionUser({ ...base, role: 1 });
    fakeServer(withStatus());
    const width = window.innerWidth;
    try {
      window.innerWidth = 600;
      await renderScreen(() => <ConsoleLayout>page</ConsoleLayout>);
      expect(screen.queryByTestId('side-menu')).toBeNull();
      await userEvent.click(screen.getByRole('button', { name: 'Open menu' }));
      expect(screen.getByTestId('side-menu').style.width).toBe('200px');
      await userEvent.click(screen.getByRole('button', { name: 'Close menu' }));
      expect(screen.queryByTestId('side-menu')).toBeNull();
      window.innerWidth = 601;
      window.dispatchEvent(new Event('resize'));
      expect(await screen.findByTestId('side-menu')).toBeTruthy();
      expect(screen.queryByRole('button', { name: 'Open menu' })).toBeNull();
    } finally {
      window.innerWidth = width;
    }
  });

  it('collapses to 60 px and remembers it', async () => {
    setSessionUser({ ...base, role: 1 });
    fakeServer(withStatus());
    await renderScreen(() => <ConsoleLayout>page</ConsoleLayout>);
    expect(screen.getByTestId('side-menu').style.width).toBe('200px');
    await userEvent.click(screen.getByTestId('sidebar-toggle'));
    expect(screen.getByTestId('side-menu').style.width).toBe('60px');
    expect(localStorage.getItem('default_collapse_sidebar')).toBe('true');
  });
});

describe('top bar and footer', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('offers sign in and sign up to visitors, but no sign up in self-use mode', async () => {
    fakeServer(withStatus({ self_use_mode_enabled: true }));
    await renderScreen(() => <TopBar />);
    await screen.findByText('Self-use mode');
    expect(screen.getByRole('link', { name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'Sign up' })).toBeNull();
  });

  it('shows the demo badge in demo mode, and sign up stays offered', async () => {
    fakeServer(withStatus({ demo_site_enabled: true }));
    await renderScreen(() => <TopBar />);
    await screen.findByText('Demo site');
    expect(screen.queryByText('Self-use mode')).toBeNull();
    expect(screen.getByRole('link', { name: 'Sign up' })).toBeTruthy();
  });

  it('shows the docs link only when one is set', async () => {
    fakeServer(withStatus({ docs_link: 'https://docs.example.com' }));
    await renderScreen(() => <TopBar />);
    expect((await screen.findByRole('link', { name: 'Docs' })).getAttribute('href')).toBe(
      'https://docs.example.com',
    );
  });

  it('switches theme and remembers it', async () => {
    fakeServer(withStatus());
    await renderScreen(() => <TopBar />);
    await userEvent.click(screen.getByRole('button', { name: 'Switch to dark theme' }));
    expect(document.documentElement.classList.contains('dark')).toBe(true);
    expect(localStorage.getItem('theme-mode')).toBe('dark');
    await userEvent.click(screen.getByRole('button', { name: 'Switch to light theme' }));
    expect(document.documentElement.classList.contains('dark')).toBe(false);
  });

  it('renders the custom footer without scripts or event handlers', async () => {
    fakeServer(
      withStatus({ footer_html: '<b>ACME</b><img src=x onerror="alert(1)"><script>alert(2)</script>' }),
    );
    await renderScreen(() => <Footer />);
    const footer = await screen.findByTestId('custom-footer');
    expect(footer.querySelector('b')?.textContent).toBe('ACME');
    expect(footer.innerHTML).not.toContain('onerror');
    expect(footer.querySelector('script')).toBeNull();
  });

  it('shows the festive item on 1 January only', () => {
    expect(isNewYearsDay(new Date(2027, 0, 1, 12))).toBe(true);
    expect(isNewYearsDay(new Date(2027, 0, 2, 12))).toBe(false);
  });

  it('shows the default credit when no footer is set', async () => {
    fakeServer(withStatus());
    await renderScreen(() => <Footer />);
    await waitFor(() => expect(screen.getByText(/Powered by Turnpike/)).toBeTruthy());
  });
});

interface Row {
  id: number;
  name: string;
}
const columns: TableColumn<Row>[] = [{ accessorKey: 'name', header: 'Name' }];

function PagedTable() {
  const [size, setSize] = usePageSize('people');
  return (
    <DataTable
      columns={columns}
      data={[{ id: 1, name: 'Ada' }]}
      page={1}
      pageSize={size}
      total={25}
      onPageChange={() => {}}
      onPageSizeChange={setSize}
    />
  );
}

describe('data table', () => {
  it('remembers the page size per table', async () => {
    fakeServer({});
    await renderScreen(() => <PagedTable />);
    expect(screen.getByText('Ada')).toBeTruthy();
    expect(screen.getByText('1 / 3')).toBeTruthy();
    await userEvent.selectOptions(screen.getByLabelText('Page size'), '20');
    expect(localStorage.getItem('page-size-people')).toBe('20');
    expect(screen.getByText('1 / 2')).toBeTruthy();
  });
});

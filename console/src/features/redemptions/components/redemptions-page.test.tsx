import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { RedemptionRow } from '../api/redemptions.ts';
import { RedemptionsPage } from './redemptions-page.tsx';

const base: Omit<RedemptionRow, 'id' | 'name' | 'key' | 'status'> = {
  user_id: 1,
  quota: 100000,
  created_time: 1_700_000_000,
  redeemed_time: 0,
  used_user_id: 0,
};
const codes: RedemptionRow[] = [
  { ...base, id: 3, name: 'spring', key: 'aaaa1111', status: 1 },
  { ...base, id: 2, name: 'paused', key: 'bbbb2222', status: 2, quota: 5_000_000 },
  {
    ...base,
    id: 1,
    name: 'gone',
    key: 'cccc3333',
    status: 3,
    used_user_id: 42,
    redeemed_time: 1_700_000_500,
  },
];

function serve(items: RedemptionRow[] = codes) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/redemption/': () => ({
      body: { success: true, data: { items, total: 25, page: 1, page_size: 10 } },
    }),
    'GET /api/redemption/search': () => ({
      body: { success: true, data: { items: [codes[1]], total: 1, page: 1, page_size: 10 } },
    }),
    'GET /api/redemption/3': () => ({ body: { success: true, data: codes[0] } }),
    'POST /api/redemption/': (call) => {
      const { count } = call.body as { count: number };
      return {
        body: {
          success: true,
          data: Array.from({ length: count }, (_, i) => `${'f'.repeat(31)}${i}`),
        },
      };
    },
    'PUT /api/redemption/': (call) => ({
      body: { success: true, data: { ...codes[0], ...(call.body as object) } },
    }),
    'DELETE /api/redemption/3/': () => ({ body: { success: true } }),
  });
}

const row = (name: string) => within(screen.getByText(name).closest('tr') as HTMLElement);

/** Captures what the page offers as a download: the file name and its text. */
function captureDownloads() {
  const blobs: Blob[] = [];
  const names: string[] = [];
  // jsdom has no object URLs; these two stand in for the browser's
  Object.assign(URL, {
    createObjectURL: vi.fn((blob: Blob) => {
      blobs.push(blob);
      return `blob:test/${blobs.length}`;
    }),
    revokeObjectURL: vi.fn(),
  });
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    names.push(this.download);
  });
  return { blobs, names };
}

describe('redemption codes page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => {
    Reflect.deleteProperty(URL, 'createObjectURL');
    Reflect.deleteProperty(URL, 'revokeObjectURL');
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });

  it('lists codes with status tags, quota and redeemer; used codes cannot be switched or edited', async () => {
    serve();
    await renderScreen(() => <RedemptionsPage />);
    expect(await screen.findByText('spring')).toBeTruthy();
    expect(row('spring').getByText('Unused')).toBeTruthy();
    expect(row('spring').getByText('$0.20')).toBeTruthy();
    expect(row('paused').getByText('Disabled')).toBeTruthy();
    expect(row('paused').getByText('$10.00')).toBeTruthy();
    expect(row('gone').getByText('Used')).toBeTruthy();
    expect(row('gone').getByText('User 42')).toBeTruthy();
    // unused offers Disable, disabled offers Enable; a used code's switch and edit are blocked
    expect(row('spring').getByRole('button', { name: 'Disable spring #3' })).toBeTruthy();
    expect(
      (row('paused').getByRole('button', { name: 'Enable paused #2' }) as HTMLButtonElement).disabled,
    ).toBe(false);
    expect((row('gone').getByRole('button', { name: 'Enable gone #1' }) as HTMLButtonElement).disabled).toBe(
      true,
    );
    expect((row('gone').getByRole('button', { name: 'Edit gone #1' }) as HTMLButtonElement).disabled).toBe(
      true,
    );
    expect(
      (row('paused').getByRole('button', { name: 'Edit paused #2' }) as HTMLButtonElement).disabled,
    ).toBe(true);
    expect(
      (row('spring').getByRole('button', { name: 'Edit spring #3' }) as HTMLButtonElement).disabled,
    ).toBe(false);
  });

  it('says what to do when there are no codes', async () => {
    serve([]);
    await renderScreen(() => <RedemptionsPage />);
    expect(await screen.findByText('No redemption codes yet')).toBeTruthy();
    expect(screen.getByText(/users redeem them on their wallet page/)).toBeTruthy();
  });

  it('searches by keyword and pages with the chosen page size', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.selectOptions(screen.getByLabelText('Page size'), '20');
    await waitFor(() =>
      expect(server.callsTo('GET', '/api/redemption/').some((c) => c.url.includes('page_size=20'))).toBe(
        true,
      ),
    );
    expect(localStorage.getItem('page-size-redemptions')).toBe('20');
    await user.type(screen.getByLabelText('Search by name or ID'), 'pau');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/redemption/search')).toHaveLength(1));
    const url = new URL(server.callsTo('GET', '/api/redemption/search')[0]?.url ?? '', 'http://x');
    expect(url.searchParams.get('keyword')).toBe('pau');
    expect(url.searchParams.get('p')).toBe('1');
    expect(url.searchParams.get('page_size')).toBe('20');
    await waitFor(() => expect(screen.queryByText('spring')).toBeNull());
  });

  it('creates codes, downloads them as a .txt file with one code per line and shows them', async () => {
    const server = serve();
    const downloads = captureDownloads();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(screen.getByRole('button', { name: 'Add redemption code' }));
    const sheet = await screen.findByRole('dialog');
    await user.type(within(sheet).getByLabelText('Name'), 'launch');
    await user.click(within(sheet).getByRole('button', { name: '$10.00' }));
    await user.click(within(sheet).getByRole('button', { name: '20' }));
    await user.clear(within(sheet).getByLabelText('Number to create'));
    await user.type(within(sheet).getByLabelText('Number to create'), '3');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/redemption/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/redemption/')[0]?.body).toEqual({
      name: 'launch',
      quota: 5_000_000,
      count: 3,
    });
    const keys = [0, 1, 2].map((i) => `${'f'.repeat(31)}${i}`);
    await waitFor(() => expect(downloads.names).toEqual(['launch.txt']));
    expect(await downloads.blobs[0]?.text()).toBe(`${keys.join('\n')}\n`);
    const shown = await screen.findByRole('dialog', { name: '3 codes created' });
    expect((within(shown).getByLabelText('Created codes') as HTMLTextAreaElement).value).toBe(
      keys.join('\n'),
    );
    expect(await screen.findByText('3 redemption codes created')).toBeTruthy();
    await user.click(within(shown).getByRole('button', { name: 'Copy all' }));
    expect(await navigator.clipboard.readText()).toBe(keys.join('\n'));
    await user.click(within(shown).getByRole('button', { name: 'Download again' }));
    expect(downloads.names).toEqual(['launch.txt', 'launch.txt']);
  });

  it('names a code after its quota when the name is left blank', async () => {
    const server = serve();
    const downloads = captureDownloads();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(screen.getByRole('button', { name: 'Add redemption code' }));
    const sheet = await screen.findByRole('dialog');
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/redemption/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/redemption/')[0]?.body).toEqual({
      name: '$0.20',
      quota: 100000,
      count: 1,
    });
    await waitFor(() => expect(downloads.names).toEqual(['$0.20.txt']));
  });

  it('refuses a long name, a bad quota and a count over 100, and sends nothing', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(screen.getByRole('button', { name: 'Add redemption code' }));
    const sheet = await screen.findByRole('dialog');
    const submit = () => user.click(within(sheet).getByRole('button', { name: 'Submit' }));

    await user.type(within(sheet).getByLabelText('Name'), 'x'.repeat(21));
    await submit();
    expect(await within(sheet).findByText('The name can be at most 20 characters')).toBeTruthy();

    await user.clear(within(sheet).getByLabelText('Name'));
    await user.type(within(sheet).getByLabelText('Name'), 'ok');
    await user.clear(within(sheet).getByLabelText('Quota (units)'));
    await user.type(within(sheet).getByLabelText('Quota (units)'), '0');
    await submit();
    expect(
      await within(sheet).findByText('The quota must be a whole number of units greater than 0'),
    ).toBeTruthy();

    await user.click(within(sheet).getByRole('button', { name: '$1.00' }));
    await user.clear(within(sheet).getByLabelText('Number to create'));
    await user.type(within(sheet).getByLabelText('Number to create'), '101');
    await submit();
    expect(
      await within(sheet).findByText('The number of codes must be a whole number from 1 to 100'),
    ).toBeTruthy();

    await user.clear(within(sheet).getByLabelText('Number to create'));
    await submit();
    expect(
      await within(sheet).findByText('The number of codes must be a whole number from 1 to 100'),
    ).toBeTruthy();
    expect(server.callsTo('POST', '/api/redemption/')).toHaveLength(0);
  });

  it('edits an unused code with its current values', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(row('spring').getByRole('button', { name: 'Edit spring #3' }));
    const sheet = await screen.findByRole('dialog', { name: 'Edit redemption code' });
    await waitFor(() =>
      expect((within(sheet).getByLabelText('Name') as HTMLInputElement).value).toBe('spring'),
    );
    expect(within(sheet).queryByLabelText('Number to create')).toBeNull();
    expect((within(sheet).getByLabelText('Quota (units)') as HTMLInputElement).value).toBe('100000');
    await user.clear(within(sheet).getByLabelText('Name'));
    await user.type(within(sheet).getByLabelText('Name'), 'summer');
    await user.click(within(sheet).getByRole('button', { name: '$50.00' }));
    await user.click(within(sheet).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/redemption/')).toHaveLength(1));
    const call = server.callsTo('PUT', '/api/redemption/')[0];
    expect(call?.url).not.toContain('status_only');
    expect(call?.body).toEqual({ id: 3, name: 'summer', quota: 25_000_000 });
    expect(await screen.findByText('Redemption code updated')).toBeTruthy();
  });

  it('enables and disables with a status-only update', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(row('paused').getByRole('button', { name: 'Enable paused #2' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/redemption/')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/redemption/')[0]?.url).toContain('status_only=true');
    expect(server.callsTo('PUT', '/api/redemption/')[0]?.body).toEqual({ id: 2, status: 1 });
    expect(await screen.findByText('Redemption code enabled')).toBeTruthy();
    await user.click(row('spring').getByRole('button', { name: 'Disable spring #3' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/redemption/')).toHaveLength(2));
    expect(server.callsTo('PUT', '/api/redemption/')[1]?.body).toEqual({ id: 3, status: 2 });
    expect(await screen.findByText('Redemption code disabled')).toBeTruthy();
  });

  it('deletes only after confirmation', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(row('spring').getByRole('button', { name: 'Delete spring #3' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog.textContent).toContain('Delete redemption code spring #3?');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', '/api/redemption/3/')).toHaveLength(0);
    await user.click(row('spring').getByRole('button', { name: 'Delete spring #3' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(server.callsTo('DELETE', '/api/redemption/3/')).toHaveLength(1));
    expect(await screen.findByText('Redemption code deleted')).toBeTruthy();
  });

  it('copies selected codes, and refuses an empty selection', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <RedemptionsPage />);
    await screen.findByText('spring');
    await user.click(screen.getByRole('button', { name: 'Copy selected' }));
    expect(await screen.findByText('Select at least one redemption code!')).toBeTruthy();
    await user.click(screen.getByLabelText('Select spring #3'));
    await user.click(screen.getByLabelText('Select gone #1'));
    await user.click(screen.getByRole('button', { name: 'Copy selected' }));
    await waitFor(async () =>
      expect(await navigator.clipboard.readText()).toBe('spring    aaaa1111\ngone    cccc3333'),
    );
    await user.click(row('paused').getByRole('button', { name: 'Copy paused #2' }));
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe('bbbb2222'));
  });
});

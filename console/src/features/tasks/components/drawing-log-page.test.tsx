import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { DrawingRow } from '../api/tasks.ts';
import { DrawingLogPage } from './drawing-log-page.tsx';

const t0 = Date.UTC(2026, 0, 10, 8, 0, 0);
const base: DrawingRow = {
  id: 1,
  user_id: 2,
  code: 1,
  action: 'IMAGINE',
  mj_id: 'mj-1',
  prompt: 'a lighthouse on a cliff at dusk, oil painting, dramatic clouds, seagulls over the sea',
  prompt_en: 'a lighthouse on a cliff',
  description: '',
  state: '',
  submit_time: t0,
  start_time: t0,
  finish_time: t0 + 45_000,
  image_url: 'https://img.example/mj-1.png',
  status: 'SUCCESS',
  progress: '100%',
  fail_reason: '',
  quota: 0,
  buttons: '',
  properties: '',
};
const slow: DrawingRow = {
  ...base,
  id: 2,
  mj_id: 'mj-2',
  action: 'UPSCALE',
  finish_time: t0 + 95_000,
  image_url: '',
  status: 'FAILURE',
  progress: '60%',
  code: 24,
  fail_reason: 'The prompt was refused by the upstream moderation: banned word "cliff" in line 1',
};
const running: DrawingRow = {
  ...base,
  id: 3,
  mj_id: 'mj-3',
  finish_time: 0,
  image_url: '',
  status: 'MODAL',
  progress: '',
};

const admin = { id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' };
const member = { id: 2, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };

const param = (call: FakeCall | undefined, name: string) =>
  new URL(call?.url ?? '', 'http://x').searchParams.get(name);

function serve(rows: (call: FakeCall) => DrawingRow[], status = makeStatus()) {
  const answer = (call: FakeCall) => ({ body: { success: true, data: rows(call) } });
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: status } }),
    'GET /api/mj/': answer,
    'GET /api/mj/self': answer,
  });
}

const rowOf = (text: string) => within(screen.getByText(text).closest('tr') as HTMLElement);

describe('drawing log', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows a user their own tasks from the last 30 days, without the channel filter or column', async () => {
    setSessionUser(member);
    const server = serve(() => [base, slow, running]);
    const before = Date.now();
    await renderScreen(() => <DrawingLogPage />);
    expect(await screen.findByText('mj-1')).toBeTruthy();
    expect(server.callsTo('GET', '/api/mj/')).toHaveLength(0);
    const call = server.callsTo('GET', '/api/mj/self')[0];
    expect(param(call, 'p')).toBe('0');
    expect(param(call, 'page_size')).toBe('10');
    expect(param(call, 'channel_id')).toBeNull();
    // times in milliseconds: from 30 days before now (to the minute) to an hour after
    const start = Number(param(call, 'start_timestamp'));
    const end = Number(param(call, 'end_timestamp'));
    expect(Math.abs(start - (before - 30 * 86_400_000))).toBeLessThan(61_000);
    expect(Math.abs(end - (before + 3_600_000))).toBeLessThan(61_000);
    expect(screen.queryByLabelText('Channel ID')).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Channel' })).toBeNull();
    // the banner about the callback is for administrators
    expect(screen.queryByRole('note')).toBeNull();
  });

  it('renders status, submit result, time spent, progress and type with their colours', async () => {
    setSessionUser(member);
    serve(() => [base, slow, running]);
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    const done = rowOf('mj-1');
    expect(done.getByText('Success').className).toMatch(/green/);
    expect(done.getByText('Submitted').className).toMatch(/green/);
    expect(done.getByText('45 s').className).toMatch(/green/);
    expect(done.getByText('Imagine')).toBeTruthy();
    expect(done.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');

    const failed = rowOf('mj-2');
    expect(failed.getByText('Failed').className).toMatch(/red/);
    expect(failed.getByText('Prompt refused').className).toMatch(/red/);
    // above 60 s is red
    expect(failed.getByText('95 s').className).toMatch(/red/);
    expect(failed.getByText('Upscale')).toBeTruthy();
    const bar = failed.getByRole('progressbar');
    expect(bar.getAttribute('aria-valuenow')).toBe('60');
    expect(bar.getAttribute('data-failed')).toBe('true');

    const waiting = rowOf('mj-3');
    expect(waiting.getByText('Waiting for input').className).toMatch(/orange/);
    expect(waiting.queryByRole('progressbar')).toBeNull();
    // an unfinished task has no time spent yet
    expect(waiting.queryByText(/\d s$/)).toBeNull();
  });

  it('cuts long prompts and failure reasons, showing the whole text on hover and on click', async () => {
    setSessionUser(member);
    serve(() => [base, slow]);
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-2');
    const reason = rowOf('mj-2').getByRole('button', { name: slow.fail_reason });
    expect(reason.getAttribute('title')).toBe(slow.fail_reason);
    expect(reason.className).toMatch(/truncate/);
    await user.click(reason);
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Failure reason')).toBeTruthy();
    expect(within(dialog).getByText(slow.fail_reason)).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await user.click(rowOf('mj-1').getByRole('button', { name: base.prompt }));
    expect(within(await screen.findByRole('dialog')).getByText(base.prompt)).toBeTruthy();
  });

  it('opens the result image large from its preview', async () => {
    setSessionUser(member);
    serve(() => [base]);
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    await user.click(screen.getByRole('button', { name: 'Enlarge the result image' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('img').getAttribute('src')).toBe(base.image_url);
    expect(within(dialog).getByRole('link', { name: 'Open the original' }).getAttribute('href')).toBe(
      base.image_url,
    );
  });

  it('labels video, edits and modal rows and links a video result to its video', async () => {
    setSessionUser(member);
    const video: DrawingRow = {
      ...base,
      id: 4,
      mj_id: 'mj-4',
      action: 'VIDEO',
      image_url: 'https://img.example/mj-4-cover.png',
      properties: JSON.stringify({
        videoUrl: 'https://cdn.example/mj-4.mp4',
        videoUrls: [{ url: 'https://cdn.example/mj-4.mp4' }],
      }),
    };
    const batch: DrawingRow = {
      ...base,
      id: 5,
      mj_id: 'mj-5',
      action: 'VIDEO',
      image_url: '',
      properties: JSON.stringify({
        videoUrls: [{ url: 'https://cdn.example/mj-5a.mp4' }, { url: 'https://cdn.example/mj-5b.mp4' }],
      }),
    };
    const edits: DrawingRow = { ...base, id: 6, mj_id: 'mj-6', action: 'EDITS' };
    const modal: DrawingRow = { ...base, id: 7, mj_id: 'mj-7', action: 'MODAL' };
    serve(() => [video, batch, edits, modal]);
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-4');
    const one = rowOf('mj-4');
    expect(one.getByText('Video')).toBeTruthy();
    const link = one.getByRole('link', { name: 'Open the video' });
    expect(link.getAttribute('href')).toBe('https://cdn.example/mj-4.mp4');
    expect(link.getAttribute('target')).toBe('_blank');
    // the cover image is still previewed beside it
    expect(one.getByRole('button', { name: 'Enlarge the result image' })).toBeTruthy();
    const two = rowOf('mj-5');
    expect(two.getAllByRole('link').map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['Video 1', 'https://cdn.example/mj-5a.mp4'],
      ['Video 2', 'https://cdn.example/mj-5b.mp4'],
    ]);
    expect(rowOf('mj-6').getByText('Edit image')).toBeTruthy();
    expect(rowOf('mj-6').queryByRole('link')).toBeNull();
    expect(rowOf('mj-7').getByText('Modal input')).toBeTruthy();
  });

  it('gives admins the channel column and filter, the callback banner, and copies a channel id', async () => {
    setSessionUser(admin);
    const server = serve(() => [
      { ...base, channel_id: 7 },
      { ...slow, channel_id: 9 },
    ]);
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    expect(server.callsTo('GET', '/api/mj/self')).toHaveLength(0);
    expect(screen.getByRole('columnheader', { name: 'Channel' })).toBeTruthy();
    expect(screen.getByRole('note').textContent).toMatch(/drawing callback is not enabled/);

    await user.click(rowOf('mj-1').getByRole('button', { name: '7' }));
    expect(await navigator.clipboard.readText()).toBe('7');

    await user.type(screen.getByLabelText('Channel ID'), '7');
    await user.type(screen.getByLabelText('Task ID'), 'mj-1');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => {
      const last = server.callsTo('GET', '/api/mj/').at(-1);
      expect(param(last, 'channel_id')).toBe('7');
      expect(param(last, 'mj_id')).toBe('mj-1');
      expect(param(last, 'p')).toBe('0');
    });
  });

  it('hides the callback banner when drawing notification is on', async () => {
    setSessionUser(admin);
    serve(() => [base], makeStatus({ mj_notify_enabled: true }));
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    await waitFor(() => expect(screen.queryByRole('note')).toBeNull());
  });

  it('refuses a bad channel id and an end before the start, and sends nothing', async () => {
    setSessionUser(admin);
    const server = serve(() => [base]);
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    const sent = server.callsTo('GET', '/api/mj/').length;
    await user.type(screen.getByLabelText('Channel ID'), 'seven');
    await user.clear(screen.getByLabelText('End time'));
    await user.type(screen.getByLabelText('End time'), '2020-01-01T00:00');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    expect(await screen.findByText('The channel ID must be a whole number')).toBeTruthy();
    expect(screen.getByText('The end time must not be before the start time')).toBeTruthy();
    expect(server.callsTo('GET', '/api/mj/')).toHaveLength(sent);
  });

  it('loads page 0 first and fetches the next server page only when going past the loaded ones', async () => {
    setSessionUser(member);
    const many = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ ...base, id: from + i, mj_id: `mj-${from + i}` }));
    const server = serve((call) => (param(call, 'p') === '0' ? many(100, 10) : many(200, 3)));
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-100');
    expect(server.callsTo('GET', '/api/mj/self')).toHaveLength(1);
    expect(screen.getByText('Items 1 - 10 of 10')).toBeTruthy();
    // a full page may have a successor, so "next" is open
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('mj-200')).toBeTruthy();
    expect(param(server.callsTo('GET', '/api/mj/self')[1], 'p')).toBe('1');
    expect(screen.getByText('Items 11 - 13 of 13')).toBeTruthy();
    expect(screen.queryByText('mj-100')).toBeNull();
    // a short page is the last one
    expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(true);
    // going back shows what is loaded without asking the server again
    await user.click(screen.getByRole('button', { name: 'Previous' }));
    expect(await screen.findByText('mj-100')).toBeTruthy();
    expect(screen.getByText('Items 1 - 10 of 13')).toBeTruthy();
    expect(server.callsTo('GET', '/api/mj/self')).toHaveLength(2);
  });

  it('stays on the last page when the next server page turns out empty', async () => {
    setSessionUser(member);
    const full = Array.from({ length: 10 }, (_, i) => ({ ...base, id: 100 + i, mj_id: `mj-${100 + i}` }));
    const server = serve((call) => (param(call, 'p') === '0' ? full : []));
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-100');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/mj/self')).toHaveLength(2));
    await waitFor(() =>
      expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(true),
    );
    expect(screen.getByText('mj-100')).toBeTruthy();
    expect(screen.getByText('Items 1 - 10 of 10')).toBeTruthy();
  });

  it('asks the server for the chosen page size and starts again from page 0', async () => {
    setSessionUser(member);
    const server = serve(() => [base]);
    const user = userEvent.setup();
    await renderScreen(() => <DrawingLogPage />);
    await screen.findByText('mj-1');
    await user.selectOptions(screen.getByLabelText('Page size'), '50');
    await waitFor(() => expect(server.callsTo('GET', '/api/mj/self')).toHaveLength(2));
    const last = server.callsTo('GET', '/api/mj/self')[1];
    expect(param(last, 'page_size')).toBe('50');
    expect(param(last, 'p')).toBe('0');
    expect(localStorage.getItem('page-size-midjourney')).toBe('50');
  });

  it('says what to do when there are no tasks', async () => {
    setSessionUser(member);
    serve(() => []);
    await renderScreen(() => <DrawingLogPage />);
    expect(await screen.findByText('No drawing tasks in this range')).toBeTruthy();
    expect(screen.getByText(/Widen the time range/)).toBeTruthy();
    expect(screen.getByText('Items 0 - 0 of 0')).toBeTruthy();
  });

  it('shows the server message when the list fails to load', async () => {
    setSessionUser(member);
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/mj/self': () => ({
        status: 400,
        body: { success: false, message: 'start_timestamp must be a Unix time in milliseconds' },
      }),
    });
    await renderScreen(() => <DrawingLogPage />);
    expect(await screen.findByText('start_timestamp must be a Unix time in milliseconds')).toBeTruthy();
    expect(await screen.findByText('The list could not be loaded')).toBeTruthy();
  });
});

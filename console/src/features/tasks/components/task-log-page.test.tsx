import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { TaskRow } from '../api/tasks.ts';
import { TaskLogPage } from './task-log-page.tsx';

const s0 = Math.floor(Date.UTC(2026, 0, 10, 8, 0, 0) / 1000);
const music: TaskRow = {
  id: 1,
  user_id: 2,
  created_at: s0,
  updated_at: s0 + 30,
  task_id: 'suno-1',
  platform: 'suno',
  action: 'MUSIC',
  status: 'SUCCESS',
  fail_reason: '',
  submit_time: s0,
  start_time: s0,
  finish_time: s0 + 30,
  progress: '100%',
  quota: 0,
  properties: { input: 'a song about tea' },
  data: [{ audio_url: 'https://cdn.example/a.mp3' }],
};
const lyrics: TaskRow = {
  ...music,
  id: 2,
  task_id: 'suno-2',
  action: 'LYRICS',
  status: 'FAILURE',
  progress: '45%',
  finish_time: s0 + 90,
  fail_reason: 'upstream said: lyrics contain a banned phrase',
};
const submitting: TaskRow = {
  ...music,
  id: 3,
  task_id: 'suno-3',
  platform: 'udio',
  action: 'EXTEND',
  status: '',
  progress: 'queued upstream',
  finish_time: 0,
};
const queued: TaskRow = {
  ...music,
  id: 4,
  task_id: 'suno-4',
  status: 'QUEUED',
  progress: '',
  finish_time: 0,
};

const admin = { id: 1, username: 'root', display_name: 'Root', role: 10, status: 1, group: 'default' };
const member = { id: 2, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };

const param = (call: FakeCall | undefined, name: string) =>
  new URL(call?.url ?? '', 'http://x').searchParams.get(name);

function serve(rows: (call: FakeCall) => TaskRow[]) {
  const answer = (call: FakeCall) => ({ body: { success: true, data: rows(call) } });
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/task/': answer,
    'GET /api/task/self': answer,
  });
}

const rowOf = (text: string) => within(screen.getByText(text).closest('tr') as HTMLElement);

describe('task log', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows a user their own tasks from the start of today in seconds, with no end and no channel', async () => {
    setSessionUser(member);
    const server = serve(() => [music]);
    await renderScreen(() => <TaskLogPage />);
    expect(await screen.findByText('suno-1')).toBeTruthy();
    expect(server.callsTo('GET', '/api/task/')).toHaveLength(0);
    const call = server.callsTo('GET', '/api/task/self')[0];
    const today = new Date();
    today.setHours(0, 0, 0, 0);
    expect(Number(param(call, 'start_timestamp'))).toBe(today.getTime() / 1000);
    expect(param(call, 'end_timestamp')).toBeNull();
    expect(param(call, 'p')).toBe('0');
    expect((screen.getByLabelText('End time') as HTMLInputElement).value).toBe('');
    expect(screen.queryByLabelText('Channel ID')).toBeNull();
    expect(screen.queryByRole('columnheader', { name: 'Channel' })).toBeNull();
    expect(screen.getAllByRole('columnheader').map((h) => h.textContent)).toEqual([
      'Submit time',
      'Finish time',
      'Progress',
      'Time spent',
      'Platform',
      'Type',
      'Task ID',
      'Status',
      'Result',
      'Failure reason',
    ]);
  });

  it('renders statuses, types, platforms, progress rings and time spent', async () => {
    setSessionUser(member);
    serve(() => [music, lyrics, submitting, queued]);
    await renderScreen(() => <TaskLogPage />);
    await screen.findByText('suno-1');
    const done = rowOf('suno-1');
    expect(done.getByText('Success').className).toMatch(/green/);
    expect(done.getByText('Generate music')).toBeTruthy();
    expect(done.getByText('Suno')).toBeTruthy();
    expect(done.getByText('30 s').className).toMatch(/green/);
    expect(done.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');

    const failed = rowOf('suno-2');
    expect(failed.getByText('Failed').className).toMatch(/red/);
    expect(failed.getByText('Generate lyrics')).toBeTruthy();
    expect(failed.getByText('90 s').className).toMatch(/red/);
    expect(failed.getByText('45%')).toBeTruthy();

    // a progress that is not a number is shown as text, not as a ring
    const pending = rowOf('suno-3');
    expect(pending.getByText('Submitting')).toBeTruthy();
    expect(pending.getByText('queued upstream')).toBeTruthy();
    expect(pending.queryByRole('progressbar')).toBeNull();
    expect(pending.getByText('udio')).toBeTruthy();
    expect(pending.getByText('EXTEND')).toBeTruthy();

    expect(rowOf('suno-4').getByText('Queued').className).toMatch(/orange/);
  });

  it('shows video tasks with their type, progress and the gateway’s own download address', async () => {
    setSessionUser(member);
    const video: TaskRow = {
      ...music,
      id: 5,
      task_id: 'video_0123456789abcdef0123456789abcdef',
      platform: 'video',
      action: 'GENERATE',
      properties: { upstream_id: 'video_upstream_1', model: 'sora-2', seconds: 8 },
      data: { id: 'video_upstream_1', status: 'completed' },
    };
    const remixing: TaskRow = {
      ...video,
      id: 6,
      task_id: 'video_fedcba9876543210fedcba9876543210',
      action: 'REMIX',
      status: 'IN_PROGRESS',
      progress: '40%',
      finish_time: 0,
    };
    serve(() => [video, remixing]);
    const user = userEvent.setup();
    await renderScreen(() => <TaskLogPage />);
    await screen.findByText(video.task_id);
    const done = rowOf(video.task_id);
    expect(done.getByText('Video')).toBeTruthy();
    expect(done.getByText('Generate video')).toBeTruthy();
    const link = `${window.location.origin}/v1/videos/${video.task_id}/content`;
    const copied = vi.fn(async () => undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText: copied } });
    await user.click(done.getByRole('button', { name: link }));
    expect(copied).toHaveBeenCalledWith(link);
    // The upstream's id is nowhere on the row; a video still being made has no link yet.
    expect(done.queryByText(/video_upstream_1/)).toBeNull();
    const pending = rowOf(remixing.task_id);
    expect(pending.getByText('Remix video')).toBeTruthy();
    expect(pending.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('40');
    expect(pending.queryByRole('button', { name: /\/content$/ })).toBeNull();
  });

  it('shows the whole record when the task id is clicked, and the failure reason in a dialog', async () => {
    setSessionUser(member);
    serve(() => [music, lyrics]);
    const user = userEvent.setup();
    await renderScreen(() => <TaskLogPage />);
    await user.click(await screen.findByRole('button', { name: 'suno-1' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Task details')).toBeTruthy();
    const text = dialog.querySelector('pre')?.textContent ?? '';
    expect(JSON.parse(text)).toMatchObject({ task_id: 'suno-1', properties: { input: 'a song about tea' } });
    expect(text).toContain('\n  "task_id": "suno-1"');
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await user.click(rowOf('suno-2').getByRole('button', { name: lyrics.fail_reason }));
    expect(within(await screen.findByRole('dialog')).getByText(lyrics.fail_reason)).toBeTruthy();
  });

  it('gives admins the channel column and filter and sends the filters in seconds', async () => {
    setSessionUser(admin);
    const server = serve(() => [{ ...music, channel_id: 8 }]);
    const user = userEvent.setup();
    await renderScreen(() => <TaskLogPage />);
    await screen.findByText('suno-1');
    expect(server.callsTo('GET', '/api/task/self')).toHaveLength(0);
    expect(rowOf('suno-1').getByRole('button', { name: '8' })).toBeTruthy();
    expect(screen.getByRole('columnheader', { name: 'Channel' })).toBeTruthy();
    // the drawing callback banner belongs to the drawing log only
    expect(screen.queryByRole('note')).toBeNull();

    await user.type(screen.getByLabelText('Channel ID'), '8');
    await user.type(screen.getByLabelText('Task ID'), 'suno-1');
    await user.type(screen.getByLabelText('End time'), '2099-01-01T10:30');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => {
      const last = server.callsTo('GET', '/api/task/').at(-1);
      expect(param(last, 'channel_id')).toBe('8');
      expect(param(last, 'task_id')).toBe('suno-1');
      expect(Number(param(last, 'end_timestamp'))).toBe(new Date('2099-01-01T10:30').getTime() / 1000);
    });
  });

  it('queries again when Query is pressed with the same filters, and Reset restores the defaults', async () => {
    setSessionUser(member);
    const server = serve(() => [music]);
    const user = userEvent.setup();
    await renderScreen(() => <TaskLogPage />);
    await screen.findByText('suno-1');
    await user.click(screen.getByRole('button', { name: 'Query' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/task/self')).toHaveLength(2));
    await user.type(screen.getByLabelText('Task ID'), 'suno-9');
    await user.click(screen.getByRole('button', { name: 'Reset' }));
    expect((screen.getByLabelText('Task ID') as HTMLInputElement).value).toBe('');
    await waitFor(() => expect(server.callsTo('GET', '/api/task/self')).toHaveLength(3));
    expect(param(server.callsTo('GET', '/api/task/self')[2], 'task_id')).toBeNull();
  });

  it('pages like the drawing log: next fetches the following server page', async () => {
    setSessionUser(member);
    const many = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ ...music, id: from + i, task_id: `suno-${from + i}` }));
    const server = serve((call) => (param(call, 'p') === '0' ? many(100, 10) : many(200, 1)));
    const user = userEvent.setup();
    await renderScreen(() => <TaskLogPage />);
    await screen.findByText('suno-100');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('suno-200')).toBeTruthy();
    expect(param(server.callsTo('GET', '/api/task/self')[1], 'p')).toBe('1');
    expect(screen.getByText('Items 11 - 11 of 11')).toBeTruthy();
  });

  it('says what to do when there are no tasks', async () => {
    setSessionUser(member);
    serve(() => []);
    await renderScreen(() => <TaskLogPage />);
    expect(await screen.findByText('No tasks in this range')).toBeTruthy();
    expect(screen.getByText(/move the start time back/)).toBeTruthy();
  });
});

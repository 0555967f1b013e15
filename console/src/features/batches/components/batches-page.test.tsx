import { readFileSync } from 'node:fs';
import path from 'node:path';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { BatchRow } from '../api/batches.ts';
import { BATCH_STATUSES, BatchesPage } from './batches-page.tsx';

const done: BatchRow = {
  id: 'batch_done',
  user_id: 2,
  username: 'alice',
  model: 'gpt-4o-mini',
  endpoint: '/v1/chat/completions',
  mode: 'openai',
  status: 'completed',
  total: 4,
  completed: 3,
  failed: 1,
  held: 2_000,
  cost: 450,
  settled: true,
  input_file_id: 'file-in',
  output_file_id: 'file-out',
  error_file_id: 'file-err',
  created_at: 1_767_000_000,
  completed_at: 1_767_000_600,
};
const running: BatchRow = {
  ...done,
  id: 'batch_running',
  mode: 'gateway',
  status: 'in_progress',
  completed: 1,
  failed: 0,
  cost: 0,
  held: 500_000,
  settled: false,
  output_file_id: null,
  error_file_id: null,
  completed_at: null,
};

const admin = { id: 1, username: 'root', display_name: 'Root', role: 10, status: 1, group: 'default' };
const member = { id: 2, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };

function serve(rows: (call: FakeCall) => BatchRow[]) {
  const answer = (call: FakeCall) => ({ body: { success: true, data: rows(call) } });
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/batch/': answer,
    'GET /api/batch/self': answer,
  });
}

const rowOf = (text: string) => within(screen.getByText(text).closest('tr') as HTMLElement);

describe('batches page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows a user their batches: status, counts, what was billed or is held, and the files to download', async () => {
    setSessionUser(member);
    const server = serve(() => [done, running]);
    await renderScreen(() => <BatchesPage />);
    await screen.findByText('batch_done');
    expect(server.callsTo('GET', '/api/batch/')).toHaveLength(0);
    expect(screen.queryByRole('columnheader', { name: 'Channel' })).toBeNull();
    const finished = rowOf('batch_done');
    expect(finished.getByText('Completed').className).toMatch(/green/);
    expect(finished.getByText('3 done, 1 failed of 4')).toBeTruthy();
    expect(finished.getByText('$0.00')).toBeTruthy();
    expect(finished.getByRole('button', { name: 'Output' })).toBeTruthy();
    expect(finished.getByRole('button', { name: 'Errors' })).toBeTruthy();
    const open = rowOf('batch_running');
    expect(open.getByText('In progress').className).toMatch(/blue/);
    expect(open.getByText('$1.00 held')).toBeTruthy();
    expect(open.getByText('Run by the gateway')).toBeTruthy();
    expect(open.queryByRole('button', { name: 'Output' })).toBeNull();
  });

  it('shows administrators every batch with its user and channel, and filters by status', async () => {
    setSessionUser(admin);
    const server = serve((call) =>
      new URL(call.url, 'http://x').searchParams.get('status') === 'completed' ? [done] : [done, running],
    );
    await renderScreen(() => <BatchesPage />);
    await screen.findByText('batch_running');
    expect(screen.getByRole('columnheader', { name: 'Channel' })).toBeTruthy();
    await userEvent.selectOptions(screen.getByLabelText('Status'), 'completed');
    await vi.waitFor(() => expect(screen.queryByText('batch_running')).toBeNull());
    expect(server.callsTo('GET', '/api/batch/').at(-1)?.url).toContain('status=completed');
  });

  it('has its texts in Chinese and English', () => {
    const keys = [
      ...Object.keys(BATCH_STATUSES).map((s) => `status.${s}`),
      'mode.openai',
      'mode.anthropic',
      'mode.gateway',
    ];
    for (const language of ['en', 'zh']) {
      const table = JSON.parse(
        readFileSync(path.resolve(import.meta.dirname, `../../../locales/${language}/batches.json`), 'utf8'),
      ) as Record<string, string>;
      expect(keys.filter((key) => !table[key])).toEqual([]);
    }
  });
});

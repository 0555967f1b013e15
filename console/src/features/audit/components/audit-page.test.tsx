import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { AuditRow } from '../api/audit.ts';
import { AuditPage } from './audit-page.tsx';

const base: Omit<AuditRow, 'id' | 'actor_type' | 'actor_id' | 'actor_name' | 'kind' | 'action' | 'outcome'> =
  {
    created_at: 1_700_000_000,
    target_ids: ['7'],
    message: '',
    source: 'PUT /api/channel/',
    ip: '203.0.113.9',
    user_agent: 'Mozilla/5.0',
    request_id: 'req-9',
    before: { name: 'old-name', key: '[secret]' },
    after: { name: 'new-name', key: '[secret]' },
    request: { id: 7, name: 'new-name', key: '[secret]' },
  };
const rows: AuditRow[] = [
  {
    ...base,
    id: 3,
    actor_type: 'user',
    actor_id: 1,
    actor_name: 'root',
    kind: 'channel',
    action: 'update',
    outcome: 'ok',
  },
  {
    ...base,
    id: 2,
    actor_type: 'operator',
    actor_id: 0,
    actor_name: 'operator',
    kind: 'option',
    action: 'apply resources',
    outcome: 'ok',
    source: 'ModelPrice team-a/gpt-4o',
    target_ids: ['ModelRatio'],
  },
  {
    ...base,
    id: 1,
    actor_type: 'token',
    actor_id: 5,
    actor_name: 'alice',
    kind: 'user',
    action: 'manage',
    outcome: 'refused',
    message: 'you cannot act on root',
    target_ids: ['1'],
  },
];

function serve() {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/audit/': () => ({
      body: { success: true, data: { items: rows, total: 3, page: 1, page_size: 10 } },
    }),
    'GET /api/audit/export': () => ({ body: { id: 1 } }),
  });
}

const rowOf = (text: string) => within(screen.getByText(text).closest('tr') as HTMLElement);

describe('audit log page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => {
    Reflect.deleteProperty(URL, 'createObjectURL');
    Reflect.deleteProperty(URL, 'revokeObjectURL');
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });

  it('lists who changed what, how it ended, and the change itself on demand', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <AuditPage />);
    expect(await screen.findByText('root #1')).toBeTruthy();
    expect(rowOf('root #1').getByText('Channel')).toBeTruthy();
    expect(rowOf('root #1').getByText('Done')).toBeTruthy();
    expect(rowOf('Kubernetes operator').getByText('ModelPrice team-a/gpt-4o')).toBeTruthy();
    expect(rowOf('alice #5').getByText('access token')).toBeTruthy();
    expect(rowOf('alice #5').getByText('Refused')).toBeTruthy();
    await user.click(rowOf('root #1').getByText('Show'));
    const details = rowOf('root #1');
    const figure = (caption: string) => details.getByText(caption).closest('figure')?.textContent ?? '';
    expect(figure('Before')).toContain('"name": "old-name"');
    expect(figure('After')).toContain('"name": "new-name"');
    expect(figure('After')).toContain('"key": "[secret]"');
    expect(details.getByText(/From 203.0.113.9/)).toBeTruthy();
  });

  it('filters by kind, outcome, user and dates, and exports what the filters select as JSON lines', async () => {
    const server = serve();
    const user = userEvent.setup();
    const clicked: string[] = [];
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:test/1'), revokeObjectURL: vi.fn() });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this.download);
    });
    await renderScreen(() => <AuditPage />);
    await screen.findByText('root #1');
    await user.selectOptions(screen.getByLabelText('Kind'), 'channel');
    await user.selectOptions(screen.getByLabelText('Outcome'), 'refused');
    await user.type(screen.getByLabelText('User ID'), '5');
    await user.type(screen.getByLabelText('From'), '2026-01-02');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => {
      const url = server.callsTo('GET', '/api/audit/').at(-1)?.url ?? '';
      expect(url).toContain('kind=channel');
      expect(url).toContain('outcome=refused');
      expect(url).toContain('actor_id=5');
      expect(url).toMatch(/start_timestamp=\d+/);
    });
    await user.click(screen.getByRole('button', { name: 'Export (JSON lines)' }));
    await waitFor(() => expect(clicked).toHaveLength(1));
    expect(clicked[0]).toMatch(/^audit-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const exported = server.callsTo('GET', '/api/audit/export')[0];
    expect(exported?.url).toContain('kind=channel');
    expect(exported?.url).toContain('actor_id=5');
  });
});

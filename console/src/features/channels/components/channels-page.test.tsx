import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { PROVIDER_TYPES, refusalOfType } from '@turnpike/core/providers/catalogue';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { ChannelRow, ChannelTagView, ChannelView } from '../api/channels.ts';
import { channelView } from '../testing/channel-view.ts';
import {
  autoDisabledInfo,
  buildTagEdit,
  COLUMNS_STORAGE_KEY,
  checkChannelForm,
  parseRowPriority,
  parseRowWeight,
  progressPercent,
  relatedModels,
  responseTimeColor,
  type TestAllProgress,
} from '../validation.ts';
import { ChannelsPage } from './channels-page.tsx';

const channel = (overrides: Partial<ChannelView> & Pick<ChannelView, 'id' | 'name'>): ChannelView =>
  channelView({ models: 'gpt-4o,gpt-4o-mini', ...overrides });

const fast = channel({ id: 1, name: 'fast', response_time: 800, balance: 12.5, used_quota: 1_000_000 });
const slow = channel({ id: 2, name: 'slow', response_time: 4200, status: 2 });
const banned = channel({
  id: 3,
  name: 'banned',
  response_time: 9000,
  status: 3,
  other_info: JSON.stringify({ status_reason: 'invalid api key', status_time: 1_700_000_000 }),
});
const claude = channel({ id: 4, name: 'claude', type: 14, models: 'claude-3-5-sonnet-20241022' });
const tagged: ChannelTagView = {
  id: 'tag:team',
  tag: 'team',
  name: 'team',
  status: 1,
  group: 'default,vip',
  models: 'gpt-4o',
  response_time: 1500,
  used_quota: 0,
  priority: 5,
  weight: null,
  children: [
    channel({ id: 10, name: 'team-a', tag: 'team', priority: 5, weight: 1 }),
    channel({ id: 11, name: 'team-b', tag: 'team', priority: 5, weight: 2 }),
  ],
};

const idle: TestAllProgress = { running: false, done: 0, total: 0, failed: 0, started_at: 0, finished_at: 0 };

type Routes = Record<string, (call: FakeCall) => { status?: number; body: unknown }>;

function serve(items: ChannelRow[] = [fast, slow, banned, claude], extra: Routes = {}) {
  const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
  return fakeServer({
    'GET /api/status': () => ok(makeStatus()),
    'GET /api/channel/': () => ok({ items, total: items.length, page: 1, page_size: 10 }),
    'GET /api/channel/search': () => ok({ items: [slow], total: 1, page: 1, page_size: 10 }),
    'GET /api/group/': () => ok(['default', 'vip']),
    'GET /api/channel/models_enabled': () => ok(['gpt-4o', 'gpt-4o-mini']),
    'GET /api/channel/models': () =>
      ok(['gpt-4o', 'gpt-3.5-turbo', 'text-embedding-3-small', 'claude-3-haiku'].map((id) => ({ id }))),
    'GET /api/channel/test/progress': () => ok(idle),
    'GET /api/channel/1': () => ok(fast),
    'POST /api/channel/': (call) => {
      const body = call.body as { key: string; name: string };
      const lines = body.key.split('\n').filter((l) => l.trim());
      return ok(lines.map((_, i) => channel({ id: 100 + i, name: body.name })));
    },
    'PUT /api/channel/': (call) => ok({ ...fast, ...(call.body as object) }),
    'PUT /api/channel/tag': () => ok(2),
    'POST /api/channel/batch': (call) => ok((call.body as { ids: number[] }).ids.length),
    'POST /api/channel/batch/tag': (call) => ok((call.body as { ids: number[] }).ids.length),
    'POST /api/channel/fetch_models': () => ok(['gpt-4o', 'o3-mini']),
    ...extra,
  });
}

const row = (name: string) => within(screen.getByTestId(`channel-${nameToId[name]}`));
const nameToId: Record<string, number> = { fast: 1, slow: 2, banned: 3, claude: 4, 'team-a': 10 };

async function openCreate(user: ReturnType<typeof userEvent.setup>) {
  await user.click(screen.getAllByRole('button', { name: 'Add channel' })[0] as HTMLElement);
  return within(await screen.findByTestId('channel-sheet'));
}

describe('channel rules (spec 02 section 5)', () => {
  it('colours response times: green to 1 s, lime to 3 s, yellow to 5 s, red beyond, grey untested', () => {
    expect([0, 1, 1000, 1001, 3000, 5000, 5001].map(responseTimeColor)).toEqual([
      'gray',
      'green',
      'green',
      'lime',
      'lime',
      'yellow',
      'red',
    ]);
  });

  it('limits inline edits: priority at least -999, weight at least 0, blank ignored', () => {
    expect(parseRowPriority('-5000')).toBe(-999);
    expect(parseRowPriority('12')).toBe(12);
    expect(parseRowPriority('')).toBeNull();
    expect(parseRowPriority('1.5')).toBeNull();
    expect(parseRowWeight('-3')).toBe(0);
    expect(parseRowWeight(' ')).toBeNull();
  });

  it('checks the form in the spec order, and needs a base URL only for the types that need one', () => {
    const ok = {
      name: 'n',
      key: 'k',
      models: ['m'],
      model_mapping: '',
      status_code_mapping: '',
      setting: '',
      param_override: '',
    };
    expect(checkChannelForm({ ...ok, name: '' }, false)).toBe('error.nameAndKey');
    expect(checkChannelForm({ ...ok, key: '' }, false)).toBe('error.nameAndKey');
    // editing keeps the stored key
    expect(checkChannelForm({ ...ok, key: '' }, true)).toBeNull();
    expect(checkChannelForm({ ...ok, models: [] }, false)).toBe('error.noModels');
    expect(checkChannelForm({ ...ok, model_mapping: '{"a":' }, false)).toBe('error.modelMapping');
    expect(checkChannelForm({ ...ok, model_mapping: '["a"]' }, false)).toBe('error.modelMapping');
    expect(checkChannelForm({ ...ok, status_code_mapping: 'x' }, false)).toBe('error.statusCodeMapping');
    expect(checkChannelForm({ ...ok, type: 3, base_url: '' }, false)).toBe('error.baseUrlRequired');
    expect(checkChannelForm({ ...ok, type: 1, base_url: '' }, false)).toBeNull();
  });

  it('builds a tag edit: blank means no change, a blank new tag dissolves, nothing set is refused', () => {
    const blank = { newTag: 'team', modelMapping: '', models: '', groups: '', priority: '', weight: '' };
    expect(buildTagEdit('team', blank)).toEqual({ error: 'error.noChanges' });
    expect(buildTagEdit('team', { ...blank, newTag: '' })).toEqual({ edit: { tag: 'team', new_tag: '' } });
    expect(buildTagEdit('team', { ...blank, priority: '1.5' })).toEqual({ error: 'error.tagPriority' });
    expect(buildTagEdit('team', { ...blank, weight: '-1' })).toEqual({ error: 'error.tagWeight' });
    expect(buildTagEdit('team', { ...blank, modelMapping: 'nope' })).toEqual({ error: 'error.modelMapping' });
    expect(buildTagEdit('team', { ...blank, models: 'a, b', priority: '-3' })).toEqual({
      edit: { tag: 'team', models: 'a,b', priority: -3 },
    });
  });

  it('reads the auto-disable reason, fills related gpt-/text- models and measures progress', () => {
    expect(autoDisabledInfo('{"status_reason":"quota","status_time":5}')).toEqual({
      reason: 'quota',
      time: 5,
    });
    expect(autoDisabledInfo('not json')).toBeNull();
    expect(relatedModels(['gpt-4o', 'claude-3', 'text-embedding-3-small', 'o1'])).toEqual([
      'gpt-4o',
      'text-embedding-3-small',
    ]);
    expect(progressPercent({ done: 1, total: 3 })).toBe(33);
    expect(progressPercent({ done: 0, total: 0 })).toBe(0);
  });
});

describe('channels page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('shows statuses, shaded disabled rows, response-time colours and the auto-disable reason', async () => {
    serve();
    await renderScreen(() => <ChannelsPage />);
    expect(await screen.findByText('fast')).toBeTruthy();
    expect(row('fast').getByText('Enabled')).toBeTruthy();
    expect(row('slow').getByText('Disabled')).toBeTruthy();
    expect(screen.getByTestId('channel-2').className).toMatch(/bg-gray-100/);
    expect(screen.getByTestId('channel-1').className).not.toMatch(/bg-gray-100/);
    expect(row('fast').getByText('0.80 s').getAttribute('data-color')).toBe('green');
    expect(row('slow').getByText('4.20 s').getAttribute('data-color')).toBe('yellow');
    expect(row('banned').getByText('9.00 s').getAttribute('data-color')).toBe('red');
    expect(row('claude').getByText('Not tested').getAttribute('data-color')).toBe('gray');
    const tip = row('banned').getByRole('tooltip');
    expect(tip.textContent).toMatch(/invalid api key/);
    expect(tip.textContent).toMatch(/2023-11-1\d/);
    // only an enabled channel offers Disable
    expect(row('fast').getByRole('button', { name: 'Disable fast' })).toBeTruthy();
    expect(row('slow').getByRole('button', { name: 'Enable slow' })).toBeTruthy();
    expect(row('banned').getByRole('button', { name: 'Enable banned' })).toBeTruthy();
    // a provider without a balance endpoint offers no refresh
    expect(row('fast').getByRole('button', { name: 'Update the balance of fast' }).textContent).toMatch(
      /\$12\.50/,
    );
    expect(row('claude').queryByRole('button', { name: 'Update the balance of claude' })).toBeNull();
  });

  it('shows a channel Kubernetes owns with a badge, read-only in the table and in its drawer, in English and Chinese', async () => {
    const gitops = channel({
      id: 5,
      name: 'team-a/openai',
      priority: 3,
      setting: JSON.stringify({ proxy: 'socks5://egress.team-a:1080', force_format: true }),
      managed_by: { kind: 'Channel', namespace: 'team-a', name: 'openai', generation: 4 },
    });
    const server = serve([fast, gitops], {
      'GET /api/channel/5': () => ({ body: { success: true, message: '', data: gitops } }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    const managed = within(await screen.findByTestId('channel-5'));
    expect(managed.getByText('Managed by Kubernetes').getAttribute('title')).toMatch(
      /Channel team-a\/openai, generation 4/,
    );
    expect(managed.getByRole('button', { name: 'Delete team-a/openai' }).hasAttribute('disabled')).toBe(true);
    expect(managed.getByRole('button', { name: 'Disable team-a/openai' }).hasAttribute('disabled')).toBe(
      true,
    );
    expect(managed.queryByLabelText(/priority of/i)).toBeNull();
    expect(row('fast').queryByText('Managed by Kubernetes')).toBeNull();

    await user.click(managed.getByRole('button', { name: 'View team-a/openai' }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    expect(sheet.getByRole('note').textContent).toMatch(
      /Channel team-a\/openai \(generation 4\) owns this channel/,
    );
    // Disabled through its fieldset, as a browser shows it.
    expect(sheet.getByLabelText('Name').matches(':disabled')).toBe(true);
    // the setting fields too, showing what the resource set
    expect(sheet.getByLabelText('Proxy').matches(':disabled')).toBe(true);
    expect((sheet.getByLabelText('Proxy') as HTMLInputElement).value).toBe('socks5://egress.team-a:1080');
    const forceFormat = sheet.getByRole('switch', { name: 'Force the OpenAI format' });
    expect(forceFormat.matches(':disabled')).toBe(true);
    expect(forceFormat.getAttribute('aria-checked')).toBe('true');
    expect(sheet.getByRole('switch', { name: 'Reasoning into content' }).matches(':disabled')).toBe(true);
    expect(sheet.queryByRole('button', { name: 'Submit' })).toBeNull();
    // The footer offers only Close (the sheet's own × is named Close too).
    await user.click(sheet.getAllByRole('button', { name: 'Close' }).at(-1) as HTMLElement);
    expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(0);

    await i18next.changeLanguage('zh');
    try {
      expect(await managed.findByText('由 Kubernetes 管理')).toBeTruthy();
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('searches by keyword, group and model', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.type(screen.getByLabelText('Keyword'), 'slo');
    await user.selectOptions(screen.getByLabelText('Group'), 'vip');
    await user.type(screen.getByLabelText('Model'), 'gpt-4o');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/channel/search')).toHaveLength(1));
    const q = new URL(server.callsTo('GET', '/api/channel/search')[0]?.url ?? '', 'http://x').searchParams;
    expect([q.get('keyword'), q.get('group'), q.get('model')]).toEqual(['slo', 'vip', 'gpt-4o']);
    await waitFor(() => expect(screen.queryByText('fast')).toBeNull());
  });

  it('toggles status with a quick edit that sends only the status', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Disable fast' }));
    await user.click(row('banned').getByRole('button', { name: 'Enable banned' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(2));
    expect(server.callsTo('PUT', '/api/channel/').map((c) => c.body)).toEqual([
      { id: 1, status: 2 },
      { id: 3, status: 1 },
    ]);
  });

  it('edits priority and weight inline within their limits; blank or invalid text sends nothing', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const priority = row('fast').getByLabelText('Priority of fast') as HTMLInputElement;
    await user.clear(priority);
    await user.type(priority, '-5000{Enter}');
    const weight = row('fast').getByLabelText('Weight of fast') as HTMLInputElement;
    await user.clear(weight);
    await user.type(weight, '-7{Enter}');
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(2));
    expect(server.callsTo('PUT', '/api/channel/').map((c) => c.body)).toEqual([
      { id: 1, priority: -999 },
      { id: 1, weight: 0 },
    ]);
    const other = row('slow').getByLabelText('Priority of slow') as HTMLInputElement;
    await user.clear(other);
    await user.tab();
    expect(other.value).toBe('0');
    expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(2);
  });

  it('in tag mode shows aggregated tag rows and checks tag-level priority and weight', async () => {
    const server = serve([tagged, fast]);
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    const tagRow = within(await screen.findByTestId('tag-team'));
    expect(tagRow.getByText('1.50 s')).toBeTruthy();
    expect((tagRow.getByLabelText('Priority of team') as HTMLInputElement).value).toBe('5');
    // the children differ in weight, so the tag shows none
    expect((tagRow.getByLabelText('Weight of team') as HTMLInputElement).value).toBe('');
    expect(screen.queryByText('team-a')).toBeNull();
    await user.click(tagRow.getByRole('button', { name: 'Show the channels of tag team' }));
    expect(screen.getByText('team-a')).toBeTruthy();

    const weight = tagRow.getByLabelText('Weight of team') as HTMLInputElement;
    await user.type(weight, '-2{Enter}');
    expect(await screen.findByText('Weight must be a non-negative integer!')).toBeTruthy();
    expect(weight.value).toBe('');
    expect(server.callsTo('PUT', '/api/channel/tag')).toHaveLength(0);
    await user.type(weight, '3{Enter}');
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/tag')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/channel/tag')[0]?.body).toEqual({ tag: 'team', weight: 3 });
  });

  it('edits a tag in its dialog: nothing changed is refused, bad JSON is refused, blank fields are left out', async () => {
    const server = serve([tagged]);
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit tag team' }));
    const dialog = within(await screen.findByRole('dialog'));
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    expect(await dialog.findByText('Nothing was changed!')).toBeTruthy();
    await user.type(dialog.getByLabelText('Model mapping'), 'not json');
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    expect(await dialog.findByText('Model mapping must be a valid JSON object!')).toBeTruthy();
    await user.clear(dialog.getByLabelText('Model mapping'));
    await user.clear(dialog.getByLabelText('Tag name'));
    await user.type(dialog.getByLabelText('Priority'), '2');
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/tag')).toHaveLength(1));
    expect(server.callsTo('PUT', '/api/channel/tag')[0]?.body).toEqual({
      tag: 'team',
      new_tag: '',
      priority: 2,
    });
  });

  it('needs a selection for batch delete and batch tag, and a non-empty tag', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(screen.getByRole('button', { name: 'Delete selected' }));
    expect(await screen.findByText('Select the channels to delete first!')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Tag selected' }));
    expect(await screen.findByText('Select the channels to tag first!')).toBeTruthy();

    await user.click(screen.getByLabelText('Select fast'));
    await user.click(screen.getByLabelText('Select slow'));
    await user.click(screen.getByRole('button', { name: 'Tag selected' }));
    const tagDialog = within(await screen.findByRole('dialog'));
    await user.click(tagDialog.getByRole('button', { name: 'Confirm' }));
    expect(await tagDialog.findByText('The tag cannot be empty!')).toBeTruthy();
    await user.type(tagDialog.getByLabelText('Tag'), 'openai');
    await user.click(tagDialog.getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/batch/tag')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/channel/batch/tag')[0]?.body).toEqual({ ids: [1, 2], tag: 'openai' });

    await user.click(screen.getByLabelText('Select banned'));
    await user.click(screen.getByRole('button', { name: 'Delete selected' }));
    const confirm = within(await screen.findByRole('dialog'));
    expect(confirm.getByText('Delete the selected channel?')).toBeTruthy();
    await user.click(confirm.getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/batch')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/channel/batch')[0]?.body).toEqual({ ids: [3] });
    expect(await screen.findByText('Channel deleted')).toBeTruthy();
  });

  it('deletes the disabled channels only after confirmation and reports the count', async () => {
    const server = serve([fast], {
      'DELETE /api/channel/disabled': () => ({ body: { success: true, data: 4 } }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(screen.getByRole('button', { name: 'Delete disabled channels' }));
    const dialog = within(await screen.findByRole('dialog'));
    await user.click(dialog.getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', '/api/channel/disabled')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Delete disabled channels' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('Deleted all disabled channels, 4 in total')).toBeTruthy();
  });

  it('remembers the column settings and the id sort', async () => {
    const server = serve();
    const user = userEvent.setup();
    const first = await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(screen.getByRole('button', { name: 'Columns' }));
    const dialog = within(await screen.findByRole('dialog'));
    await user.click(dialog.getByLabelText('Type'));
    await user.click(dialog.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('columnheader', { name: 'Type' })).toBeNull());
    expect(JSON.parse(localStorage.getItem(COLUMNS_STORAGE_KEY) ?? '{}').type).toBe(false);
    await user.click(screen.getByRole('switch', { name: 'Sort by ID' }));
    await waitFor(() =>
      expect(server.callsTo('GET', '/api/channel/').some((c) => c.url.includes('id_sort=true'))).toBe(true),
    );
    first.unmount();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    expect(screen.queryByRole('columnheader', { name: 'Type' })).toBeNull();
    expect(server.callsTo('GET', '/api/channel/').at(-1)?.url).toContain('id_sort=true');
  });

  it('tests one channel and reports the time; refreshes its balance', async () => {
    serve(undefined, {
      'GET /api/channel/test/1': () => ({
        body: { success: true, message: '', time: 1.234, data: { time: 1.234 } },
      }),
      'GET /api/channel/test/2': () => ({
        body: { success: false, message: 'upstream said 401', time: 0.2 },
      }),
      'GET /api/channel/update_balance/1': () => ({
        body: { success: true, data: { balance: 3 }, balance: 3 },
      }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Test fast' }));
    expect(await screen.findByText('Channel test succeeded in 1.23 s')).toBeTruthy();
    await user.click(row('slow').getByRole('button', { name: 'Test slow' }));
    expect(await screen.findByText('Channel test failed: upstream said 401')).toBeTruthy();
    await user.click(row('fast').getByRole('button', { name: 'Update the balance of fast' }));
    expect(await screen.findByText('Balance updated')).toBeTruthy();
  });

  it('tests chosen models in a grid, one at a time or all in turn', async () => {
    const server = serve(undefined, {
      'GET /api/channel/test/1': (call) =>
        call.url.includes('gpt-4o-mini')
          ? { body: { success: false, message: 'model not found' } }
          : { body: { success: true, message: '', time: 0.5 } },
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Choose a model to test fast' }));
    const dialog = within(await screen.findByRole('dialog'));
    expect(dialog.getByRole('list', { name: 'Models of the channel' }).getAttribute('style')).toMatch(
      /minmax\(min\(200px, 100%\), 1fr\)/,
    );
    await user.click(dialog.getByRole('button', { name: 'Test gpt-4o' }));
    expect(await within(dialog.getByTestId('model-test-gpt-4o')).findByText('0.50 s')).toBeTruthy();
    expect(
      new URL(server.callsTo('GET', '/api/channel/test/1')[0]?.url ?? '', 'http://x').searchParams.get(
        'model',
      ),
    ).toBe('gpt-4o');
    await user.click(dialog.getByRole('button', { name: 'Test all 2 models' }));
    expect(await screen.findByText('Tested 2 models, 1 failed')).toBeTruthy();
    expect(
      within(dialog.getByTestId('model-test-gpt-4o-mini')).getByText('Failed: model not found'),
    ).toBeTruthy();
  });

  it('shows the progress of a test of every channel and refreshes when it ends', async () => {
    let progress: TestAllProgress = idle;
    const server = serve(undefined, {
      'GET /api/channel/test': () => {
        progress = { running: true, done: 1, total: 4, failed: 1, started_at: 1, finished_at: 0 };
        return { body: { success: true, message: 'testing every channel in the background' } };
      },
      'GET /api/channel/test/progress': () => ({ body: { success: true, data: progress } }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    expect(screen.queryByRole('progressbar')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Test all channels' }));
    const bar = await screen.findByRole('progressbar', { name: 'Progress of the channel tests' });
    expect(bar.getAttribute('aria-valuenow')).toBe('25');
    expect(screen.getByText('Testing channels: 1 of 4 done')).toBeTruthy();
    expect(screen.getByText('1 failed')).toBeTruthy();
    const listsBefore = server.callsTo('GET', '/api/channel/').length;
    progress = { running: false, done: 4, total: 4, failed: 1, started_at: 1, finished_at: 2 };
    expect(
      await screen.findByText('Channel tests finished: 4 tested, 1 failed', {}, { timeout: 4000 }),
    ).toBeTruthy();
    expect(screen.queryByRole('progressbar')).toBeNull();
    await waitFor(() => expect(server.callsTo('GET', '/api/channel/').length).toBeGreaterThan(listsBefore));
  });

  it('follows a run that is already going when the page opens', async () => {
    serve(undefined, {
      'GET /api/channel/test/progress': () => ({
        body: {
          success: true,
          data: { running: true, done: 2, total: 10, failed: 0, started_at: 1, finished_at: 0 },
        },
      }),
    });
    await renderScreen(() => <ChannelsPage />);
    expect(await screen.findByText('Testing channels: 2 of 10 done')).toBeTruthy();
    expect(screen.getByRole('button', { name: /Test all channels/ }).hasAttribute('disabled')).toBe(true);
  });

  it('follows the run going on when a start is refused because one is running already', async () => {
    let started = false;
    serve(undefined, {
      'GET /api/channel/test': () => {
        started = true;
        return {
          status: 409,
          body: { success: false, code: 'CONFLICT', message: 'a test of every channel is already running' },
        };
      },
      'GET /api/channel/test/progress': () => ({
        body: {
          success: true,
          data: started
            ? { running: true, done: 3, total: 10, failed: 0, started_at: 1, finished_at: 0 }
            : idle,
        },
      }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(screen.getByRole('button', { name: 'Test all channels' }));
    expect(await screen.findByText(/already running/)).toBeTruthy();
    expect(await screen.findByText('Testing channels: 3 of 10 done')).toBeTruthy();
  });

  it('copies a channel with its key through the copy call, and says why a copy failed', async () => {
    let fail = false;
    const server = serve(undefined, {
      'POST /api/channel/copy/1': (call) =>
        fail
          ? { status: 404, body: { success: false, message: 'channel not found' } }
          : {
              body: {
                success: true,
                data: { ...fast, id: 9, name: `fast${(call.body as { suffix: string }).suffix}` },
              },
            },
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Copy fast' }));
    const dialog = within(await screen.findByRole('dialog'));
    expect(dialog.getByText('New name: fast_copy')).toBeTruthy();
    await user.clear(dialog.getByLabelText('Name suffix'));
    await user.type(dialog.getByLabelText('Name suffix'), '-eu');
    await user.click(dialog.getByRole('switch', { name: 'Start the copy with a zero balance' }));
    await user.click(dialog.getByRole('button', { name: 'Copy' }));
    expect(await screen.findByText('Channel copied as fast-eu')).toBeTruthy();
    expect(server.callsTo('POST', '/api/channel/copy/1')[0]?.body).toEqual({
      suffix: '-eu',
      reset_balance: false,
    });

    fail = true;
    await user.click(row('fast').getByRole('button', { name: 'Copy fast' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Copy' }));
    expect(await screen.findByText('Channel copy failed: channel not found')).toBeTruthy();
  });
});

describe('channel drawer', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('is 600 px wide and the whole width on a phone', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await openCreate(user);
    const panel = screen.getByTestId('channel-sheet');
    expect(panel.parentElement?.className).toMatch(/w-full/);
    expect(panel.parentElement?.className).toMatch(/sm:w-\[600px\]/);
  });

  it('refuses a channel without name and key, then without models, and sends nothing', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.click(sheet.getByRole('button', { name: 'Clear all' }));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await sheet.findByText('Please fill in the channel name and key!')).toBeTruthy();
    await user.type(sheet.getByLabelText('Name'), 'main');
    await user.type(sheet.getByLabelText('Key'), 'sk-1');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await sheet.findByText('Please select at least one model!')).toBeTruthy();
    expect(server.callsTo('POST', '/api/channel/')).toHaveLength(0);
  });

  it("shows the server's refusal of an internal base URL and keeps the form open with what was typed", async () => {
    // The API's answer to an administrator below root (api/src/modules/channels/channel-addresses.int.test.ts).
    const refusal =
      'base_url points to a private or internal address; the root user can allow its range in System settings → Requests to user addresses';
    const server = serve(undefined, {
      'POST /api/channel/': () => ({
        status: 400,
        body: { success: false, code: 'VALIDATION_FAILED', message: refusal },
      }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.type(sheet.getByLabelText('Name'), 'metadata');
    await user.type(sheet.getByLabelText('Key'), 'sk-1');
    await user.type(sheet.getByLabelText('Base URL'), 'http://169.254.169.254');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText(refusal)).toBeTruthy();
    expect(server.callsTo('POST', '/api/channel/')).toHaveLength(1);
    expect(screen.getByTestId('channel-sheet')).toBeTruthy();
    expect((sheet.getByLabelText('Base URL') as HTMLInputElement).value).toBe('http://169.254.169.254');
  });

  it('checks the JSON mappings when they lose focus and on submit', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.type(sheet.getByLabelText('Name'), 'main');
    await user.type(sheet.getByLabelText('Key'), 'sk-1');
    await user.type(sheet.getByLabelText('Model mapping'), '{{"gpt-4o": ');
    await user.tab();
    expect(sheet.getByText('Model mapping must be a valid JSON object!')).toBeTruthy();
    await user.type(sheet.getByLabelText('Status code mapping'), '[[1]');
    await user.tab();
    expect(sheet.getByText('Status code mapping must be a valid JSON object!')).toBeTruthy();
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(server.callsTo('POST', '/api/channel/')).toHaveLength(0);
  });

  it('creates one channel per key line, strips the trailing slash and sends integers, after the /v1 warning', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.type(sheet.getByLabelText('Name'), 'main');
    await user.type(sheet.getByLabelText('Key'), 'sk-1{Enter}sk-2{Enter}{Enter}sk-3');
    expect(sheet.getByText('3 keys: one channel is created for each')).toBeTruthy();
    await user.type(sheet.getByLabelText('Base URL'), 'https://proxy.example/v1/');
    expect(sheet.getByText(/ending in \/v1 is usually unnecessary/)).toBeTruthy();
    await user.clear(sheet.getByLabelText('Priority'));
    await user.type(sheet.getByLabelText('Priority'), '7');
    await user.clear(sheet.getByLabelText('Weight'));
    await user.type(sheet.getByLabelText('Weight'), '3');
    await user.click(sheet.getByLabelText('vip'));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    // the /v1 warning: cancelling sends nothing
    const warning = await screen.findByRole('dialog', { name: 'Submit a base URL ending in /v1?' });
    await user.click(within(warning).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('POST', '/api/channel/')).toHaveLength(0);
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await user.click(
      within(await screen.findByRole('dialog', { name: 'Submit a base URL ending in /v1?' })).getByRole(
        'button',
        {
          name: 'Confirm',
        },
      ),
    );
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/channel/')[0]?.body).toMatchObject({
      name: 'main',
      type: 1,
      base_url: 'https://proxy.example/v1',
      priority: 7,
      weight: 3,
      groups: ['default', 'vip'],
      auto_ban: 1,
      models: expect.arrayContaining(['gpt-4o', 'gpt-4o-mini']),
    });
    expect(await screen.findByText('Created 3 channels')).toBeTruthy();
  });

  it("shows the type-specific key format and fields, Spark's HTTP APIPassword, and needs an Azure endpoint", async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    expect(sheet.getByLabelText('OpenAI organization')).toBeTruthy();
    await user.selectOptions(sheet.getByLabelText('Type'), '18');
    expect(sheet.getByText(/^Format: The APIPassword of the HTTP API/)).toBeTruthy();
    // the WebSocket API's version field went with it
    expect(sheet.queryByLabelText('Model version')).toBeNull();
    expect(sheet.queryByLabelText('OpenAI organization')).toBeNull();
    await user.selectOptions(sheet.getByLabelText('Type'), '21');
    expect(sheet.queryByLabelText('Knowledge base ID')).toBeNull();
    await user.selectOptions(sheet.getByLabelText('Type'), '3');
    expect(sheet.getByLabelText('API version')).toBeTruthy();
    await user.type(sheet.getByLabelText('Name'), 'azure');
    await user.type(sheet.getByLabelText('Key'), 'abc');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(await sheet.findByText(/needs its own address/)).toBeTruthy();
    await user.type(sheet.getByLabelText('Azure endpoint'), 'https://r.openai.azure.com/');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/channel/')[0]?.body).toMatchObject({
      type: 3,
      base_url: 'https://r.openai.azure.com',
      other: '',
      models: expect.arrayContaining(['gpt-4o']),
    });
  });

  it('warns when the chosen type cannot carry what its models need, in English and Chinese', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    const note = () => sheet.queryByRole('note');
    // OpenAI with its default models: everything is relayed
    expect(note()).toBeNull();
    // Anthropic relays chat (and batches of chat) only: an embedding model listed on it is named
    await user.selectOptions(sheet.getByLabelText('Type'), '14');
    expect(note()).toBeNull();
    await user.type(sheet.getByLabelText('Custom model names'), 'text-embedding-3-small');
    await user.click(sheet.getByRole('button', { name: 'Add' }));
    expect(note()?.textContent).toBe(
      'Anthropic Claude channels relay chat, batches only; these models need endpoints this type cannot carry and will not be served here: text-embedding-3-small',
    );
    // Gemini relays embeddings too
    await user.selectOptions(sheet.getByLabelText('Type'), '24');
    expect(note()).toBeNull();
    // Midjourney carries its drawing tasks only
    await user.selectOptions(sheet.getByLabelText('Type'), '2');
    expect(note()?.textContent).toMatch(
      /^Midjourney Proxy channels relay drawing tasks only; .*here: claude-.*, text-embedding-3-small$/,
    );
    // the type list says what each type carries, from the catalogue, and offers no retired type
    const typeSelect = sheet.getByLabelText('Type') as HTMLSelectElement;
    const label = (value: string) => typeSelect.querySelector(`option[value="${value}"]`)?.textContent;
    expect(label('41')).toBe('Vertex AI (41) · chat, embeddings');
    expect(label('2')).toBe('Midjourney Proxy (2) · drawing tasks');
    expect(label('11')).toBeUndefined();

    await i18next.changeLanguage('zh');
    try {
      await waitFor(() => expect(label('41')).toBe('Vertex AI (41) · 对话、嵌入'));
      await user.selectOptions(sheet.getByLabelText('类型'), '2');
      expect(note()?.textContent).toMatch(
        /^Midjourney Proxy 渠道只转发绘图任务；.*：claude-.*, text-embedding-3-small$/,
      );
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  // What each provider's API serves, from its own reference, not from the catalogue:
  // - Jina: embeddings (POST https://api.jina.ai/v1/embeddings, https://jina.ai/embeddings/) and rerank (POST
  //   https://api.jina.ai/v1/rerank, https://jina.ai/reranker/); no chat, no images.
  // - iFlytek Spark's HTTP API: chat completions only (POST https://spark-api-open.xf-yun.com/v1/chat/completions,
  //   https://www.xfyun.cn/doc/spark/HTTP%E8%B0%83%E7%94%A8%E6%96%87%E6%A1%A3.html).
  // - M3E (Moka Massive Mixed Embedding, https://huggingface.co/moka-ai/m3e-base): text embeddings only.
  // - OpenAI (https://platform.openai.com/docs/api-reference): chat, embeddings, images, audio, moderations, videos.
  it('says what Jina, Spark, M3E and OpenAI channels carry as their own APIs do, and names what they cannot', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    const typeSelect = sheet.getByLabelText('Type') as HTMLSelectElement;
    const label = (value: string) => typeSelect.querySelector(`option[value="${value}"]`)?.textContent;
    expect(label('38')).toBe('Jina (38) · embeddings, rerank');
    expect(label('18')).toBe('iFlytek Spark (18) · chat');
    expect(label('44')).toBe('M3E embeddings (44) · embeddings');
    const openai = label('1')
      ?.replace(/^OpenAI \(1\) · /, '')
      .split(', ');
    for (const kind of ['chat', 'embeddings', 'images', 'audio', 'moderations', 'videos'])
      expect(openai, kind).toContain(kind);

    // A chat model and an image model on a Jina channel are named, and the note says what Jina does carry.
    await user.selectOptions(typeSelect, '38');
    for (const model of ['gpt-4o', 'dall-e-3']) {
      await user.type(sheet.getByLabelText('Custom model names'), model);
      await user.click(sheet.getByRole('button', { name: 'Add' }));
    }
    const note = () => sheet.queryByRole('note')?.textContent;
    expect(note()).toBe(
      'Jina channels relay embeddings, rerank only; these models need endpoints this type cannot carry and will not be served here: gpt-4o, dall-e-3',
    );
    await user.selectOptions(typeSelect, '44');
    await user.type(sheet.getByLabelText('Custom model names'), 'jina-reranker-v2-base-multilingual');
    await user.click(sheet.getByRole('button', { name: 'Add' }));
    expect(note()).toMatch(
      /^M3E embeddings channels relay embeddings only; .*: .*jina-reranker-v2-base-multilingual/,
    );
    await user.selectOptions(typeSelect, '18');
    await user.type(sheet.getByLabelText('Custom model names'), 'text-embedding-3-small');
    await user.click(sheet.getByRole('button', { name: 'Add' }));
    expect(note()).toMatch(/^iFlytek Spark channels relay chat only; .*: .*text-embedding-3-small/);
    await user.selectOptions(typeSelect, '1');
    expect(note()).toBeUndefined();

    await i18next.changeLanguage('zh');
    try {
      await waitFor(() => expect(label('38')).toBe('Jina (38) · 嵌入、重排序'));
      expect(label('18')).toBe('iFlytek Spark (18) · 对话');
      expect(label('44')).toBe('M3E embeddings (44) · 嵌入');
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('shows an existing channel of a retired type (PaLM 2) as retired, and offers no other type the relay does not serve', async () => {
    const palm = channel({ id: 6, name: 'palm', type: 11, models: 'PaLM-2' });
    serve([fast, palm], {
      'GET /api/channel/6': () => ({ body: { success: true, message: '', data: palm } }),
    });
    nameToId.palm = 6;
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('palm');
    await user.click(row('palm').getByRole('button', { name: 'Edit palm' }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    const select = sheet.getByLabelText('Type') as HTMLSelectElement;
    await waitFor(() => expect(select.value).toBe('11'));
    expect(select.selectedOptions[0]?.textContent).toBe('Google PaLM2 (retired) (11) · retired, not relayed');
    expect(sheet.getByRole('note').textContent).toMatch(/does not relay requests to .* channels yet/);
    // every other option is a type the relay serves or a task type
    const values = [...select.options].map((o) => Number(o.value));
    expect(
      values
        .filter((v) => v !== 11)
        .every((v) => !/retired/.test(select.querySelector(`option[value="${v}"]`)?.textContent ?? '')),
    ).toBe(true);
  });

  it('in Chinese shows each type its own key format and placeholder in Chinese, never the English catalogue', async () => {
    await i18next.changeLanguage('zh');
    try {
      serve();
      const user = userEvent.setup();
      await renderScreen(() => <ChannelsPage />);
      await screen.findByText('fast');
      await user.click(screen.getAllByRole('button', { name: '添加渠道' })[0] as HTMLElement);
      const sheet = within(await screen.findByTestId('channel-sheet'));
      expect(sheet.getByText('格式：每行一个 API 密钥')).toBeTruthy();
      expect(sheet.getByPlaceholderText('请输入 API 密钥，每行一个')).toBeTruthy();
      expect(sheet.getByLabelText('OpenAI 组织')).toBeTruthy();
      await user.selectOptions(sheet.getByLabelText('类型'), '41');
      expect(sheet.getByText('格式：服务账号的 JSON 凭据（整个文件内容）')).toBeTruthy();
      expect(sheet.getByPlaceholderText('粘贴服务账号 JSON 文件的全部内容')).toBeTruthy();
      await user.selectOptions(sheet.getByLabelText('类型'), '2');
      expect(sheet.getByText('格式：代理服务的 mj-api-secret')).toBeTruthy();
      await user.selectOptions(sheet.getByLabelText('类型'), '33');
      expect(sheet.getByText('格式：AccessKey|SecretAccessKey|Region')).toBeTruthy();
      expect(sheet.getByPlaceholderText('AccessKey|SecretAccessKey|Region（每行一个）')).toBeTruthy();

      // no type shows the catalogue's English wording (key format, placeholder or extra-field label)
      const english = (text: string) => /[a-z]{2,}\s[a-z]{2,}/i.test(text);
      const panel = screen.getByTestId('channel-sheet');
      const shown = () =>
        [
          panel.textContent ?? '',
          ...[...panel.querySelectorAll('input, textarea')].map((e) => e.getAttribute('placeholder') ?? ''),
        ].join('\n');
      const leaked: string[] = [];
      let checked = 0;
      // every type offered for a new channel (retired ones are not)
      for (const p of PROVIDER_TYPES.filter((type) => refusalOfType(type.value) === undefined)) {
        await user.selectOptions(sheet.getByLabelText('类型'), String(p.value));
        const texts = [p.keyFormat, ...p.extraFields.map((x) => x.label)].filter(english);
        checked += texts.length;
        leaked.push(...texts.filter((text) => shown().includes(text)).map((text) => `${p.value}: ${text}`));
      }
      expect(checked).toBeGreaterThan(PROVIDER_TYPES.length / 2);
      expect(leaked).toEqual([]);
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('fetches upstream models only with a key, fills related models and reports custom models that exist', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.click(sheet.getByRole('button', { name: 'Clear all' }));
    await user.click(sheet.getByRole('button', { name: 'Fetch from upstream' }));
    expect(await sheet.findByText('Please fill in the key first')).toBeTruthy();
    expect(server.callsTo('POST', '/api/channel/fetch_models')).toHaveLength(0);
    await user.type(sheet.getByLabelText('Key'), 'sk-1{Enter}sk-2');
    await user.click(sheet.getByRole('button', { name: 'Fetch from upstream' }));
    expect(await sheet.findByRole('button', { name: 'Remove o3-mini' })).toBeTruthy();
    expect(server.callsTo('POST', '/api/channel/fetch_models')[0]?.body).toMatchObject({ type: 1 });

    await user.click(sheet.getByRole('button', { name: 'Fill related models' }));
    const selected = within(sheet.getByRole('list', { name: 'Selected models' }));
    expect(selected.getByText('gpt-3.5-turbo')).toBeTruthy();
    expect(selected.getByText('text-embedding-3-small')).toBeTruthy();
    expect(selected.queryByText('claude-3-haiku')).toBeNull();

    await user.type(sheet.getByLabelText('Custom model names'), 'gpt-4o, my-model');
    await user.click(sheet.getByRole('button', { name: 'Add' }));
    expect(await screen.findByText('These models are already in the list: gpt-4o')).toBeTruthy();
    expect(selected.getByText('my-model')).toBeTruthy();
  });

  it('sets proxy, force format and reasoning into content as fields that write the setting JSON', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.type(sheet.getByLabelText('Name'), 'main');
    await user.type(sheet.getByLabelText('Key'), 'sk-1');
    expect(sheet.getByText(/Requests to this channel go through this proxy/)).toBeTruthy();
    await user.type(sheet.getByLabelText('Proxy'), 'ftp://proxy.example');
    await user.tab();
    expect(sheet.getByText('The proxy must be an http://, https:// or socks5:// URL!')).toBeTruthy();
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    expect(server.callsTo('POST', '/api/channel/')).toHaveLength(0);

    await user.clear(sheet.getByLabelText('Proxy'));
    await user.type(sheet.getByLabelText('Proxy'), 'socks5://u:pw@127.0.0.1:1080');
    await user.tab();
    expect(sheet.queryByText('The proxy must be an http://, https:// or socks5:// URL!')).toBeNull();
    await user.click(sheet.getByRole('switch', { name: 'Force the OpenAI format' }));
    await user.click(sheet.getByRole('switch', { name: 'Reasoning into content' }));
    // the same keys show in the setting JSON
    expect(JSON.parse((sheet.getByLabelText('Extra settings') as HTMLTextAreaElement).value)).toEqual({
      proxy: 'socks5://u:pw@127.0.0.1:1080',
      force_format: true,
      thinking_to_content: true,
    });
    await user.click(sheet.getByRole('switch', { name: 'Reasoning into content' }));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/channel/')).toHaveLength(1));
    const body = server.callsTo('POST', '/api/channel/')[0]?.body as { setting: string };
    expect(JSON.parse(body.setting)).toEqual({ proxy: 'socks5://u:pw@127.0.0.1:1080', force_format: true });
  });

  it("shows a channel's setting in the fields and keeps the keys they do not cover when one changes", async () => {
    const configured = {
      ...fast,
      setting: JSON.stringify({
        proxy: 'http://egress:3128',
        force_format: true,
        headers: { 'X-Team': 'a' },
      }),
    };
    const server = serve([configured, slow], {
      'GET /api/channel/1': () => ({ body: { success: true, message: '', data: configured } }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Edit fast' }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    expect(await sheet.findByDisplayValue('http://egress:3128')).toBeTruthy();
    const forceFormat = sheet.getByRole('switch', { name: 'Force the OpenAI format' });
    expect(forceFormat.getAttribute('aria-checked')).toBe('true');
    expect(sheet.getByRole('switch', { name: 'Reasoning into content' }).getAttribute('aria-checked')).toBe(
      'false',
    );
    await user.click(forceFormat);
    await user.clear(sheet.getByLabelText('Proxy'));
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(1));
    const body = server.callsTo('PUT', '/api/channel/')[0]?.body as { setting: string };
    expect(JSON.parse(body.setting)).toEqual({ headers: { 'X-Team': 'a' } });
  });

  it('locks the setting fields while the setting JSON does not parse, and labels them in Chinese', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    const sheet = await openCreate(user);
    await user.type(sheet.getByLabelText('Extra settings'), '{{"proxy": ');
    expect(sheet.getByLabelText('Proxy').matches(':disabled')).toBe(true);
    expect(sheet.getByRole('switch', { name: 'Force the OpenAI format' }).matches(':disabled')).toBe(true);
    expect(sheet.getByText('Fix the extra settings JSON below to edit these fields.')).toBeTruthy();
    await i18next.changeLanguage('zh');
    try {
      expect(await sheet.findByLabelText('代理')).toBeTruthy();
      expect(sheet.getByRole('switch', { name: '强制 OpenAI 格式' })).toBeTruthy();
      expect(sheet.getByRole('switch', { name: '思考内容转为正文' })).toBeTruthy();
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('edits a channel: a blank key keeps the stored one', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <ChannelsPage />);
    await screen.findByText('fast');
    await user.click(row('fast').getByRole('button', { name: 'Edit fast' }));
    const sheet = within(await screen.findByTestId('channel-sheet'));
    expect(await sheet.findByDisplayValue('fast')).toBeTruthy();
    await user.clear(sheet.getByLabelText('Name'));
    await user.type(sheet.getByLabelText('Name'), 'fast-2');
    await user.click(sheet.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(server.callsTo('PUT', '/api/channel/')).toHaveLength(1));
    const body = server.callsTo('PUT', '/api/channel/')[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ id: 1, name: 'fast-2' });
    expect('key' in body).toBe(false);
  });
});

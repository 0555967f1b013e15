import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen, savedJsonOptions } from '../../../testing/render.tsx';
import type { SettingsTab } from '../tabs.ts';
import { SettingsPage } from './settings-page.tsx';

const options: Record<string, string> = {
  ServerAddress: 'https://gw.example.com',
  PasswordLoginEnabled: 'true',
  RegisterEnabled: 'true',
  EmailDomainWhitelist: 'gmail.com',
  'oidc.well_known': '',
  ModelRequestRateLimitEnabled: 'false',
  ModelRequestRateLimitSuccessCount: '1000',
  ModelRequestRateLimitCount: '0',
  ModelRequestRateLimitDurationMinutes: '1',
  GroupRatio: '{"default": 1}',
  ModelPrice: '{}',
  ModelRatio: '{"gpt-4o": 1.25}',
  CompletionRatio: '{"gpt-4o": 4}',
  LogConsumeEnabled: 'true',
  'general_setting.ping_interval_enabled': 'false',
  'general_setting.ping_interval_seconds': '60',
};

function serve(
  putStatus: (key: string) => number = () => 200,
  values: Record<string, string> = options,
  extra: Parameters<typeof fakeServer>[0] = {},
) {
  return fakeServer({
    'GET /api/option/': () => ({
      body: { success: true, data: Object.entries(values).map(([key, value]) => ({ key, value })) },
    }),
    'PUT /api/option/': (call) => {
      const status = putStatus((call.body as { key: string }).key);
      return { status, body: { success: status === 200, message: status === 200 ? 'saved' : 'bad' } };
    },
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'DELETE /api/log/': () => ({ body: { success: true, data: 7 } }),
    ...extra,
  });
}

async function open(tab: SettingsTab) {
  await renderScreen(() => <SettingsPage tab={tab} onTabChange={() => {}} />);
  await screen.findAllByRole('button', { name: /^Save/ });
}

const section = (name: string) => within(screen.getByRole('region', { name }));

/** The options with the price-shape maps stored empty. */
const withShapes = { ...options, LongContextTiers: '{}', ServiceTierRatio: '{}', RequestFees: '{}' };

/** Replaces a field's text as a person pasting it would (JSON braces cannot be typed key by key). */
async function replaceText(field: HTMLElement, text: string) {
  await userEvent.clear(field);
  await userEvent.click(field);
  await userEvent.paste(text);
}

describe('settings page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('lists the options a GatewayOption resource manages, naming it', async () => {
    serve(undefined, undefined, {
      'GET /api/option/owners': () => ({
        body: {
          success: true,
          data: [
            {
              key: 'SystemName',
              entry: '',
              kind: 'GatewayOption',
              namespace: 'ops',
              name: 'branding',
              generation: 1,
            },
            {
              key: 'ModelRatio',
              entry: 'gpt-4o',
              kind: 'ModelPrice',
              namespace: 'ops',
              name: 'gpt-4o',
              generation: 1,
            },
          ],
        },
      }),
    });
    await open('system');
    const note = await screen.findByRole('note');
    expect(note.textContent).toMatch(/Managed by Kubernetes/);
    expect(note.textContent).toMatch(/SystemName \(GatewayOption ops\/branding\)/);
    expect(note.textContent).not.toMatch(/ModelRatio/);
  });

  it('says nothing changed and sends nothing when a section is saved untouched', async () => {
    const server = serve();
    await open('system');
    await userEvent.click(section('General').getByRole('button', { name: 'Save General' }));
    expect(await screen.findByText('You seem not to have changed anything')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('sends only the changed option, without the trailing slash', async () => {
    const server = serve();
    await open('system');
    const input = section('General').getByLabelText('Server address');
    await userEvent.clear(input);
    await userEvent.type(input, 'https://new.example.com/');
    await userEvent.click(section('General').getByRole('button', { name: 'Save General' }));
    await screen.findByText('Saved');
    expect(server.callsTo('PUT', '/api/option/').map((c) => c.body)).toEqual([
      { key: 'ServerAddress', value: 'https://new.example.com' },
    ]);
  });

  it('reports a partial failure when some options fail', async () => {
    serve((key) => (key === 'SMTPPort' ? 400 : 200));
    await open('system');
    const smtp = section('SMTP');
    await userEvent.type(smtp.getByLabelText('SMTP server'), 'smtp.example.com');
    await userEvent.type(smtp.getByLabelText('SMTP port'), '465');
    await userEvent.click(smtp.getByRole('button', { name: 'Save SMTP' }));
    expect(await screen.findByText('Some settings could not be saved, please retry (bad)')).toBeTruthy();
  });

  it('asks before turning password login off and reverts on cancel', async () => {
    const server = serve();
    await open('system');
    const login = section('Login and registration');
    const toggle = login.getByRole('switch', { name: 'Allow password login' });
    await userEvent.click(toggle);
    await screen.findByText(/Turn off password login\?/);
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(toggle.getAttribute('aria-checked')).toBe('true'));
    await userEvent.click(toggle);
    await userEvent.click(await screen.findByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(toggle.getAttribute('aria-checked')).toBe('false'));
    await userEvent.click(login.getByRole('button', { name: 'Save Login and registration' }));
    await screen.findByText('Saved');
    expect(server.callsTo('PUT', '/api/option/').map((c) => c.body)).toEqual([
      { key: 'PasswordLoginEnabled', value: 'false' },
    ]);
  });

  it('validates whitelist entries before adding them', async () => {
    serve();
    await open('system');
    const wl = section('Email domain whitelist');
    await userEvent.type(wl.getByLabelText('Domain to add'), 'gmail.com');
    await userEvent.click(wl.getByRole('button', { name: 'Add' }));
    expect(wl.getByRole('alert').textContent).toBe('This domain is already in the list');
    await userEvent.clear(wl.getByLabelText('Domain to add'));
    await userEvent.type(wl.getByLabelText('Domain to add'), 'nodot');
    await userEvent.click(wl.getByRole('button', { name: 'Add' }));
    expect(wl.getByRole('alert').textContent).toBe('Enter a valid domain name such as gmail.com');
    await userEvent.clear(wl.getByLabelText('Domain to add'));
    await userEvent.type(wl.getByLabelText('Domain to add'), 'qq.com');
    await userEvent.click(wl.getByRole('button', { name: 'Add' }));
    expect((wl.getByLabelText('Allowed domains') as HTMLInputElement).value).toBe('gmail.com,qq.com');
  });

  it('refuses to fetch OIDC configuration from a non-http address and fills endpoints from a good one', async () => {
    serve();
    await open('system');
    const oidc = section('OIDC');
    await userEvent.type(oidc.getByLabelText('Well-known URL'), 'idp.example.com');
    await userEvent.click(oidc.getByRole('button', { name: 'Fetch configuration' }));
    expect(await screen.findByText('The well-known URL must start with http:// or https://')).toBeTruthy();

    const realFetch = globalThis.fetch;
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) =>
      String(url).startsWith('https://idp')
        ? new Response(
            JSON.stringify({
              authorization_endpoint: 'https://idp.example.com/auth',
              token_endpoint: 'https://idp.example.com/token',
              userinfo_endpoint: 'https://idp.example.com/me',
            }),
          )
        : realFetch(url, init),
    );
    await userEvent.clear(oidc.getByLabelText('Well-known URL'));
    await userEvent.type(
      oidc.getByLabelText('Well-known URL'),
      'https://idp.example.com/.well-known/openid-configuration',
    );
    await userEvent.click(oidc.getByRole('button', { name: 'Fetch configuration' }));
    await screen.findByText('OIDC configuration fetched');
    expect((oidc.getByLabelText('Token endpoint') as HTMLInputElement).value).toBe(
      'https://idp.example.com/token',
    );
  });

  it('checks JSON fields when they lose focus and blocks the save', async () => {
    const server = serve();
    await open('operation');
    const ratios = section('Model ratios');
    const group = ratios.getByLabelText('Group ratios (JSON)');
    await userEvent.clear(group);
    await userEvent.type(group, '{{bad');
    await userEvent.tab();
    expect(ratios.getByRole('alert').textContent).toBe('Not a valid JSON string');
    await userEvent.click(ratios.getByRole('button', { name: 'Save Model ratios' }));
    expect(await screen.findByText('Please check your input')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  // Claude Sonnet 4.5 above 200K prompt tokens: $6 / $22.50 beside $3 / $15, × 2 and × 1.5
  // (https://docs.anthropic.com/en/docs/about-claude/pricing).
  it.each([
    [
      'Long-context tiers (JSON)',
      '{"claude-sonnet-4-5":[{"above":200000,"input":0,"output":1.5}]}',
      'LongContextTiers must be a JSON object mapping each model name (or a prefix ending in *) to a list of tiers {"above": prompt tokens, "input": ×, "output": ×, "cache"?: ×} (at "claude-sonnet-4-5"[0]"input": must be more than 0)',
    ],
    [
      'Service tier ratios (JSON)',
      '{"gpt-5":{"Priority":2}}',
      'ServiceTierRatio must be a JSON object mapping each model name (or a prefix ending in *) to an object of service tier ("priority", "flex", …) to a multiplier of 0 or more (at "gpt-5""Priority": a service tier is lower-case letters, digits, "-" or "_")',
    ],
    [
      'Per-request fees in USD (JSON)',
      '{"claude-sonnet-4-5":{"web_search":-0.01}}',
      'RequestFees must be a JSON object mapping each model name (or a prefix ending in *) to {"web_search"?: USD per search, "image"?: USD per image} (at "claude-sonnet-4-5""web_search": must not be negative)',
    ],
  ])(
    'refuses a bad %s with the registry’s words and saves nothing of the section',
    async (label, text, message) => {
      const server = serve(undefined, withShapes);
      await open('operation');
      const ratios = section('Model ratios');
      // A good change beside the bad one: neither is sent.
      await replaceText(ratios.getByLabelText('Model ratios (JSON)'), '{"gpt-4o": 1.5}');
      await replaceText(ratios.getByLabelText(label), text);
      await userEvent.tab();
      expect(ratios.getByRole('alert').textContent).toBe(message);
      await userEvent.click(ratios.getByRole('button', { name: 'Save Model ratios' }));
      expect(await screen.findByText('Please check your input')).toBeTruthy();
      expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
    },
  );

  it('saves good long-context tiers, service tiers and fees', async () => {
    const server = serve(undefined, withShapes);
    await open('operation');
    const ratios = section('Model ratios');
    const values = {
      'Long-context tiers (JSON)': '{"claude-sonnet-4*":[{"above":200000,"input":2,"output":1.5,"cache":2}]}',
      'Service tier ratios (JSON)': '{"gpt-5":{"priority":2,"flex":0.5}}',
      'Per-request fees in USD (JSON)': '{"claude-sonnet-4-5":{"web_search":0.01}}',
    };
    for (const [label, text] of Object.entries(values)) await replaceText(ratios.getByLabelText(label), text);
    await userEvent.click(ratios.getByRole('button', { name: 'Save Model ratios' }));
    await screen.findByText('Saved');
    const sent = savedJsonOptions(server);
    expect(sent).toEqual({
      LongContextTiers: { 'claude-sonnet-4*': [{ above: 200000, input: 2, output: 1.5, cache: 2 }] },
      ServiceTierRatio: { 'gpt-5': { priority: 2, flex: 0.5 } },
      RequestFees: { 'claude-sonnet-4-5': { web_search: 0.01 } },
    });
  });

  it('enforces the rate-limit minimums', async () => {
    const server = serve();
    await open('ratelimit');
    const input = screen.getByLabelText('Max successful requests per period');
    await userEvent.clear(input);
    await userEvent.type(input, '0');
    await userEvent.click(screen.getByRole('button', { name: 'Save Model request rate limit' }));
    expect(screen.getByText('Must be at least 1')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('disables the ping interval unless ping is on', async () => {
    serve();
    await open('models');
    const seconds = screen.getByLabelText('Ping interval (seconds)') as HTMLInputElement;
    expect(seconds.disabled).toBe(true);
    await userEvent.click(screen.getByRole('switch', { name: 'Send keep-alive pings on streams' }));
    expect(seconds.disabled).toBe(false);
  });

  it('clears logs before the chosen time after confirmation, and needs a time', async () => {
    const server = serve();
    await open('operation');
    const logs = section('Logs');
    const picker = logs.getByLabelText('Clear logs before');
    await userEvent.clear(picker);
    await userEvent.click(logs.getByRole('button', { name: 'Clear history logs' }));
    expect(logs.getByRole('alert').textContent).toBe('Please select the log time');
    await userEvent.type(picker, '2026-01-01T00:00');
    await userEvent.click(logs.getByRole('button', { name: 'Clear history logs' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('7 logs cleared')).toBeTruthy();
    const call = server.callsTo('DELETE', '/api/log/')[0];
    expect(call?.url).toContain(
      `target_timestamp=${Math.floor(new Date('2026-01-01T00:00').getTime() / 1000)}`,
    );
  });

  it('hides the root tabs from an admin', async () => {
    setSessionUser({ id: 2, username: 'adm', display_name: 'Adm', role: 10, status: 1, group: 'default' });
    serve();
    await open('operation');
    expect(screen.queryByRole('tab', { name: 'System' })).toBeNull();
    expect(screen.getByRole('tab', { name: 'Rate limit' })).toBeTruthy();
  });

  it('shows an admin only the options the server listed for them', async () => {
    setSessionUser({ id: 2, username: 'adm', display_name: 'Adm', role: 10, status: 1, group: 'default' });
    // What GET /api/option/ answers an administrator: operation settings, no QuotaPerUnit, no drawing switches here.
    const listed = { ...options, RetryTimes: '0', DisplayInCurrencyEnabled: 'true' };
    delete (listed as Record<string, string>).ServerAddress;
    serve(undefined, listed);
    await open('operation');
    const general = section('General');
    expect(general.getByLabelText('Retry times')).toBeTruthy();
    expect(general.queryByLabelText('Quota per dollar')).toBeNull();
    expect(general.queryByRole('switch', { name: 'Self-use mode' })).toBeNull();
    expect(screen.queryByRole('region', { name: 'Drawing' })).toBeNull();
    expect(screen.getByRole('region', { name: 'Logs' })).toBeTruthy();
  });

  it('shows a Chinese console why the server refused a save, in Chinese with the server reason', async () => {
    const managed = 'RetryTimes is set by GatewayOption default/gateway; change it with kubectl or in Git';
    setSessionUser({ id: 2, username: 'adm', display_name: 'Adm', role: 10, status: 1, group: 'default' });
    const listed = { ...options, RetryTimes: '0' };
    const server = fakeServer({
      'GET /api/option/': () => ({
        body: { success: true, data: Object.entries(listed).map(([key, value]) => ({ key, value })) },
      }),
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'PUT /api/option/': () => ({
        status: 409,
        body: { success: false, code: 'MANAGED_BY_KUBERNETES', message: managed },
      }),
    });
    await i18next.changeLanguage('zh');
    try {
      await renderScreen(() => <SettingsPage tab="operation" onTabChange={() => {}} />);
      await screen.findAllByRole('button', { name: /^保存/ });
      const general = section('通用设置');
      const retries = general.getByLabelText('失败重试次数');
      await userEvent.clear(retries);
      await userEvent.type(retries, '2');
      await userEvent.click(general.getByRole('button', { name: /^保存/ }));
      expect(
        await screen.findByText(
          `保存失败，请重试 (该项由 Kubernetes 资源管理，请使用 kubectl 或在 Git 中修改：${managed})`,
        ),
      ).toBeTruthy();
      expect(server.callsTo('PUT', '/api/option/')).toHaveLength(1);
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('refuses payment settings until the server address is set', async () => {
    const server = serve(undefined, { ...options, ServerAddress: '', Price: '7.3', MinTopUp: '1' });
    await open('system');
    const payment = section('Payment');
    const price = payment.getByLabelText('Top-up price (per dollar)');
    await userEvent.clear(price);
    await userEvent.type(price, '7.5');
    await userEvent.click(payment.getByRole('button', { name: 'Save Payment' }));
    expect(await screen.findByText('Set the server address in the general section first')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('checks the top-up group ratio JSON when it loses focus and refuses to save it', async () => {
    const server = serve();
    await open('system');
    const payment = section('Payment');
    const ratio = payment.getByLabelText('Top-up group ratios (JSON)');
    await userEvent.type(ratio, '{{"vip": ');
    await userEvent.tab();
    expect(payment.getByRole('alert').textContent).toBe('Not a valid JSON string');
    await userEvent.click(payment.getByRole('button', { name: 'Save Payment' }));
    expect(await screen.findByText('Please check your input')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('sends an empty worker key when the worker address is cleared, and no key otherwise', async () => {
    const server = serve(undefined, { ...options, WorkerUrl: 'https://worker.example.com' });
    await open('system');
    const worker = section('Proxy worker');
    await userEvent.clear(worker.getByLabelText('Worker URL'));
    await userEvent.click(worker.getByRole('button', { name: 'Save Proxy worker' }));
    await screen.findByText('Saved');
    expect(server.callsTo('PUT', '/api/option/').map((c) => c.body)).toEqual([
      { key: 'WorkerUrl', value: '' },
      { key: 'WorkerValidKey', value: '' },
    ]);
  });

  it("saves the ranges root lets webhooks reach and shows the server's refusal of a bad one", async () => {
    const refusal =
      'fetch_setting.allowed_ranges must be IP ranges such as 10.0.0.0/8 or fd00::/8, or single addresses, one a line; "10.0.0.0/33" is not one';
    const server = serve(
      undefined,
      { ...options, 'fetch_setting.enable_ssrf_protection': 'true' },
      {
        'PUT /api/option/': (call) => {
          const { value } = call.body as { value: string };
          return value.includes('/33')
            ? { status: 400, body: { success: false, message: refusal } }
            : { body: { success: true, message: 'saved' } };
        },
      },
    );
    await open('system');
    const fetch = section('Requests to user addresses');
    const ranges = fetch.getByLabelText('Ranges allowed anyway');
    await userEvent.type(ranges, '10.0.0.0/33');
    await userEvent.click(fetch.getByRole('button', { name: 'Save Requests to user addresses' }));
    expect(await screen.findByText(/"10.0.0.0\/33" is not one/)).toBeTruthy();
    await userEvent.clear(ranges);
    await userEvent.type(ranges, '10.0.0.0/8{enter}fd00::/8');
    await userEvent.click(fetch.getByRole('button', { name: 'Save Requests to user addresses' }));
    await screen.findByText('Saved');
    expect(server.callsTo('PUT', '/api/option/').map((c) => c.body)).toEqual([
      { key: 'fetch_setting.allowed_ranges', value: '10.0.0.0/33' },
      { key: 'fetch_setting.allowed_ranges', value: '10.0.0.0/8\nfd00::/8' },
    ]);
  });

  it('names the outbound address settings in Chinese', async () => {
    serve(undefined, { ...options, 'fetch_setting.enable_ssrf_protection': 'true' });
    await i18next.changeLanguage('zh');
    try {
      await renderScreen(() => <SettingsPage tab="system" onTabChange={() => {}} />);
      await screen.findAllByRole('button', { name: /^保存/ });
      const fetch = section('访问用户提供的地址');
      expect(fetch.getByLabelText('仍然允许的网段')).toBeTruthy();
      expect(fetch.getByText('拒绝内网、回环和链路本地地址（Webhook）')).toBeTruthy();
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('checks for updates against the configured release feed, and says when the check fails', async () => {
    const feed = 'https://releases.internal.test/turnpike/latest';
    let answer: { status?: number; body: unknown } = { body: { tag_name: 'v9.9.9' } };
    const server = serve(undefined, options, {
      'GET /api/status': () => ({ body: { success: true, data: makeStatus({ update_check_url: feed }) } }),
      [`GET ${feed}`]: () => answer,
    });
    await open('other');
    const info = section('System info');
    await userEvent.click(await info.findByRole('button', { name: 'Check for updates' }));
    expect(await info.findByText('A new version is available: v9.9.9')).toBeTruthy();
    expect(server.callsTo('GET', feed)).toHaveLength(1);
    answer = { status: 403, body: { message: 'rate limited' } };
    await userEvent.click(info.getByRole('button', { name: 'Check for updates' }));
    expect(await screen.findByText('Update check failed')).toBeTruthy();
  });

  it('offers no update check when no release feed is configured', async () => {
    serve();
    await open('other');
    const info = section('System info');
    await info.findByText('Version: test'); // the status has loaded
    expect(info.queryByRole('button', { name: 'Check for updates' })).toBeNull();
  });

  it('resets model ratios only after confirming that it cannot be undone', async () => {
    const server = serve(undefined, options, {
      'POST /api/option/rest_model_ratio': () => ({ body: { success: true } }),
    });
    await open('operation');
    await userEvent.click(screen.getByRole('button', { name: 'Reset model ratios' }));
    expect(await screen.findByText(/This change is irreversible/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('POST', '/api/option/rest_model_ratio')).toHaveLength(0);
    await userEvent.click(screen.getByRole('button', { name: 'Reset model ratios' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('Model ratios reset to the built-in defaults')).toBeTruthy();
    expect(server.callsTo('POST', '/api/option/rest_model_ratio')).toHaveLength(1);
  });
});

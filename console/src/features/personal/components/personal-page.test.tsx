import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getSessionUser, setSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { setLeaveFor } from '../../auth/third-party.ts';
import type { SelfUser } from '../api/self.ts';
import { PersonalPage } from './personal-page.tsx';

const me: SelfUser = {
  id: 5,
  username: 'alice',
  display_name: 'Alice',
  role: 1,
  status: 1,
  email: '',
  group: 'default',
  quota: 1_000_000,
  used_quota: 250_000,
  request_count: 12,
  aff_code: 'Ab12',
  aff_count: 2,
  aff_quota: 1_500_000,
  aff_history_quota: 2_000_000,
  github_id: 'gh-1',
  oidc_id: '',
  wechat_id: '',
  telegram_id: '',
  linux_do_id: '',
  setting: JSON.stringify({ notify_type: 'email', quota_warning_threshold: 500000 }),
};

function serve(
  status: Partial<SiteStatus> = {},
  models: string[] = ['gpt-4o', 'claude-3-5-sonnet'],
  groups: Record<string, { ratio: number; desc: string }> = { default: { ratio: 1, desc: 'Default' } },
  extra: Parameters<typeof fakeServer>[0] = {},
) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus(status) } }),
    'GET /api/user/self/groups': () => ({ body: { success: true, data: groups } }),
    'GET /api/user/models': () => ({ body: { success: true, data: models } }),
    'GET /api/user/self': () => ({ body: { success: true, data: me } }),
    'POST /api/user/aff_transfer': () => ({ body: { success: true } }),
    'PUT /api/user/setting': () => ({ body: { success: true } }),
    'PUT /api/user/self': () => ({ body: { success: true } }),
    'DELETE /api/user/self': () => ({ body: { success: true } }),
    'GET /api/user/token': () => ({ body: { success: true, data: 'tok-123' } }),
    'GET /api/verification': () => ({ body: { success: true } }),
    'GET /api/oauth/email/bind': () => ({ body: { success: true } }),
    ...extra,
  });
}

/** The user with nothing bound, and a state for the redirect sign-ins. */
const unbound = {
  'GET /api/user/self': () => ({ body: { success: true, data: { ...me, github_id: '' } } }),
  'GET /api/oauth/state': () => ({ body: { success: true, data: 'st-7' } }),
};

const dialog = () => within(screen.getByRole('dialog'));

describe('personal settings', () => {
  beforeEach(() =>
    setSessionUser({ id: 5, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('shows balance, invite link and bindings', async () => {
    serve();
    await renderScreen(() => <PersonalPage />);
    expect((await screen.findByTestId('balance')).textContent).toBe('$2.00');
    expect((screen.getByLabelText('Invite link') as HTMLInputElement).value).toBe(
      `${window.location.origin}/register?aff=Ab12`,
    );
    expect(screen.getByText('GitHub: gh-1')).toBeTruthy();
    expect(screen.getByText('Email: not bound')).toBeTruthy();
  });

  it('deletes the account only when the username is typed', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Delete account' }));
    await userEvent.type(dialog().getByLabelText(/Type your username/), 'alic');
    await userEvent.click(dialog().getByRole('button', { name: 'Delete' }));
    expect(dialog().getByText('Enter your account name to confirm deletion')).toBeTruthy();
    expect(server.callsTo('DELETE', '/api/user/self')).toHaveLength(0);
    await userEvent.type(dialog().getByLabelText(/Type your username/), 'e');
    await userEvent.click(dialog().getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(server.callsTo('DELETE', '/api/user/self')).toHaveLength(1));
    await waitFor(() => expect(getSessionUser()).toBeNull());
  });

  it('changes the password only when both entries match', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Change password' }));
    await userEvent.type(dialog().getByLabelText('Current password'), 'oldpass12');
    await userEvent.type(dialog().getByLabelText('New password'), 'newpass12');
    await userEvent.type(dialog().getByLabelText('Confirm new password'), 'newpass13');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByText('The two passwords differ')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/user/self')).toHaveLength(0);
    await userEvent.clear(dialog().getByLabelText('Confirm new password'));
    await userEvent.type(dialog().getByLabelText('Confirm new password'), 'newpass12');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await screen.findByText('Password changed');
    expect(server.callsTo('PUT', '/api/user/self')[0]?.body).toEqual({
      original_password: 'oldpass12',
      password: 'newpass12',
    });
  });

  it('binding an email needs the email and the code; the code button waits 30 s', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Bind' }));
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByText('Enter your email address')).toBeTruthy();
    await userEvent.type(dialog().getByLabelText('Email address'), 'a@b.co');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByText('Enter the verification code')).toBeTruthy();
    await userEvent.click(dialog().getByRole('button', { name: 'Get code' }));
    expect((dialog().getByRole('button', { name: 'Resend (30 s)' }) as HTMLButtonElement).disabled).toBe(
      true,
    );
    await userEvent.type(dialog().getByLabelText('Verification code'), '123456');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await screen.findByText('Email bound');
    expect(server.callsTo('GET', '/api/oauth/email/bind')[0]?.url).toContain('email=a%40b.co&code=123456');
  });

  it('refuses an invite transfer below one unit', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Move earnings to balance' }));
    await userEvent.type(dialog().getByLabelText('Amount (quota units)'), '1000');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByText('The minimum transfer is $1.00')).toBeTruthy();
    expect(server.callsTo('POST', '/api/user/aff_transfer')).toHaveLength(0);
    await userEvent.clear(dialog().getByLabelText('Amount (quota units)'));
    await userEvent.type(dialog().getByLabelText('Amount (quota units)'), '500000');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await screen.findByText('Moved to your balance');
    expect(server.callsTo('POST', '/api/user/aff_transfer')[0]?.body).toEqual({ quota: 500000 });
  });

  it('saves notification settings with a preset threshold and requires a webhook address', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.selectOptions(await screen.findByLabelText('Notify by'), 'webhook');
    await userEvent.click(screen.getByRole('button', { name: '1,000,000 ($2.00)' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(screen.getByText('Enter the webhook address')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/user/setting')).toHaveLength(0);
    await userEvent.type(screen.getByLabelText('Webhook address'), 'https://hooks.example.com/x');
    await userEvent.click(screen.getByRole('tab', { name: 'Price' }));
    await userEvent.click(screen.getByRole('switch', { name: 'Accept models without a price' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await screen.findByText('Settings saved');
    expect(server.callsTo('PUT', '/api/user/setting')[0]?.body).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 1000000,
      webhook_url: 'https://hooks.example.com/x',
      webhook_secret: '',
      notification_email: '',
      accept_unset_model_ratio_model: true,
    });
  });

  it('generates an access token and shows it for manual copy when the clipboard fails', async () => {
    const server = serve();
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText: () => Promise.reject(new Error('denied')) },
    });
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Generate system access token' }));
    expect(dialog().getByText(/replaces the old one/)).toBeTruthy();
    expect(server.callsTo('GET', '/api/user/token')).toHaveLength(0);
    await userEvent.click(dialog().getByRole('button', { name: 'Generate' }));
    expect(await screen.findByText('Unable to copy to clipboard, please copy manually')).toBeTruthy();
    expect(dialog().getByText('tok-123')).toBeTruthy();
    expect(
      (screen.getByLabelText('System access token', { selector: 'input' }) as HTMLInputElement).value,
    ).toBe('tok-123');
  });

  it('asks before generating an access token and does nothing when cancelled', async () => {
    const server = serve();
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Generate system access token' }));
    expect(dialog().getByText('Generate a new system access token?')).toBeTruthy();
    await userEvent.click(dialog().getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(server.callsTo('GET', '/api/user/token')).toHaveLength(0);
    expect(screen.queryByLabelText('System access token', { selector: 'input' })).toBeNull();
  });

  it('shows third-party rows only for enabled sign-ins, with a bind button for each unbound one', async () => {
    serve({ oidc_enabled: true, telegram_oauth: true });
    await renderScreen(() => <PersonalPage />);
    expect(await screen.findByText('GitHub: gh-1')).toBeTruthy(); // bound, though GitHub sign-in is off
    expect(screen.getByText('OIDC: not bound')).toBeTruthy();
    expect(screen.getByText('Telegram: not bound')).toBeTruthy();
    expect(screen.queryByText(/LinuxDO/)).toBeNull();
    expect(screen.queryByText(/WeChat/)).toBeNull();
    expect(screen.getByRole('button', { name: 'Bind OIDC' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Bind Telegram' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Bind GitHub' })).toBeNull();
  });

  it('binding GitHub fetches a state and leaves for GitHub, as a sign-in does', async () => {
    const leave = vi.fn();
    setLeaveFor(leave);
    const server = serve(
      { github_oauth: true, github_client_id: 'gh-client' },
      undefined,
      undefined,
      unbound,
    );
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Bind GitHub' }));
    await waitFor(() =>
      expect(leave).toHaveBeenCalledWith(
        'https://github.com/login/oauth/authorize?client_id=gh-client&state=st-7&scope=user:email',
      ),
    );
    expect(server.callsTo('GET', '/api/oauth/state')).toHaveLength(1);
  });

  it('binding WeChat sends the code to the bind endpoint, then reads the user again', async () => {
    const server = serve({ wechat_login: true, wechat_qrcode: '/qr.png' }, undefined, undefined, {
      'GET /api/oauth/wechat/bind': (call) =>
        call.url.endsWith('code=5566')
          ? { body: { success: true, message: 'your WeChat account has been bound' } }
          : { status: 400, body: { success: false, message: 'wrong or expired code' } },
    });
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Bind WeChat' }));
    expect(dialog().getByRole('heading', { name: 'Bind WeChat' })).toBeTruthy();
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe('Enter the verification code');
    expect(server.callsTo('GET', '/api/oauth/wechat/bind')).toHaveLength(0);
    await userEvent.type(dialog().getByLabelText('Verification code'), '1111');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect((await dialog().findByRole('alert')).textContent).toBe('wrong or expired code');
    const reads = server.callsTo('GET', '/api/user/self').length;
    await userEvent.clear(dialog().getByLabelText('Verification code'));
    await userEvent.type(dialog().getByLabelText('Verification code'), '5566');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('The account is now bound.')).toBeTruthy();
    expect(server.callsTo('GET', '/api/oauth/wechat/bind').map((c) => c.url)).toEqual([
      '/api/oauth/wechat/bind?code=1111',
      '/api/oauth/wechat/bind?code=5566',
    ]);
    await waitFor(() => expect(server.callsTo('GET', '/api/user/self').length).toBe(reads + 1));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('binding Telegram shows its widget and hands the signed fields to the bind endpoint', async () => {
    const server = serve({ telegram_oauth: true, telegram_bot_name: 'turnpike_bot' }, undefined, undefined, {
      'GET /api/oauth/telegram/bind': () => ({ body: { success: true } }),
    });
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('button', { name: 'Bind Telegram' }));
    const script = screen.getByTestId('telegram-widget').querySelector('script');
    expect(script?.dataset.telegramLogin).toBe('turnpike_bot');
    expect(script?.dataset.onauth).toBe('turnpikeTelegramAuth(user)');
    const reads = server.callsTo('GET', '/api/user/self').length;
    window.turnpikeTelegramAuth?.({ id: 777, first_name: 'Al', auth_date: 1700000000, hash: 'ab12' });
    await waitFor(() => expect(server.callsTo('GET', '/api/oauth/telegram/bind')).toHaveLength(1));
    expect(server.callsTo('GET', '/api/oauth/telegram/bind')[0]?.url).toBe(
      '/api/oauth/telegram/bind?id=777&first_name=Al&auth_date=1700000000&hash=ab12',
    );
    await waitFor(() => expect(server.callsTo('GET', '/api/user/self').length).toBe(reads + 1));
    expect(screen.queryByTestId('telegram-widget')).toBeNull();
  });

  it('price tab shows the group ratio with its colour and the usable models, ten before "more"', async () => {
    const models = Array.from({ length: 12 }, (_, i) => `model-${i + 1}`);
    const server = serve({}, models, { default: { ratio: 4, desc: 'Default' } });
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('tab', { name: 'Price' }));
    const ratio = await screen.findByTestId('group-ratio');
    expect(ratio.textContent).toBe('4x');
    expect(ratio.parentElement?.className).toContain('bg-orange-100');
    const list = within(screen.getByRole('list', { name: 'Models you can use' }));
    expect(list.getAllByText(/^model-/)).toHaveLength(10);
    expect(list.queryByText('model-11')).toBeNull();
    await userEvent.click(list.getByRole('button', { name: '2 more' }));
    expect(list.getAllByText(/^model-/)).toHaveLength(12);
    expect(server.callsTo('GET', '/api/user/models')).toHaveLength(1);
  });

  it('price tab says what to do when no model is available', async () => {
    serve({}, []);
    await renderScreen(() => <PersonalPage />);
    await userEvent.click(await screen.findByRole('tab', { name: 'Price' }));
    expect(await screen.findByText('No models are available to your group yet')).toBeTruthy();
    expect(screen.getByText(/Ask the administrator/)).toBeTruthy();
  });
});

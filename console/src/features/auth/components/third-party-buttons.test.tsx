import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { setLeaveFor } from '../third-party.ts';
import { ThirdPartyButtons } from './third-party-buttons.tsx';

const user = { id: 8, username: 'wechat_8', display_name: '', role: 1, status: 1, group: 'default' };
const show = (status: Partial<SiteStatus>) =>
  renderScreen(() => <ThirdPartyButtons status={makeStatus(status)} />, { path: '/sign-in' });
const dialog = () => within(screen.getByRole('dialog'));

describe('third-party sign-in buttons', () => {
  const leave = vi.fn();
  beforeEach(() => setLeaveFor(leave));
  afterEach(() => {
    vi.unstubAllGlobals();
    leave.mockReset();
    delete window.turnpikeTelegramAuth;
  });

  it('GitHub fetches a state and leaves for GitHub with it', async () => {
    const server = fakeServer({ 'GET /api/oauth/state': () => ({ body: { success: true, data: 'st-5' } }) });
    await show({ github_oauth: true, github_client_id: 'gh-client' });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with GitHub' }));
    await waitFor(() =>
      expect(leave).toHaveBeenCalledWith(
        'https://github.com/login/oauth/authorize?client_id=gh-client&state=st-5&scope=user:email',
      ),
    );
    expect(server.callsTo('GET', '/api/oauth/state')).toHaveLength(1);
  });

  it('WeChat refuses an empty code without a request', async () => {
    const server = fakeServer({});
    await show({ wechat_login: true, wechat_qrcode: 'https://example.com/qr.png' });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with WeChat' }));
    expect(dialog().getByRole('img', { name: 'WeChat official account QR code' }).getAttribute('src')).toBe(
      'https://example.com/qr.png',
    );
    expect(dialog().getByText(/Scan the QR code with WeChat/)).toBeTruthy();
    await userEvent.type(dialog().getByLabelText('Verification code'), '   ');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe('Enter the verification code');
    expect(server.calls).toHaveLength(0);
  });

  it('WeChat keeps the dialog open with the server message when the code is refused', async () => {
    fakeServer({
      'GET /api/oauth/wechat': () => ({
        status: 400,
        body: { success: false, message: 'wrong or expired code' },
      }),
    });
    await show({ wechat_login: true });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with WeChat' }));
    await userEvent.type(dialog().getByLabelText('Verification code'), '1234');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect((await dialog().findByRole('alert')).textContent).toBe('wrong or expired code');
    expect(screen.getByRole('dialog')).toBeTruthy();
    expect(getSessionUser()).toBeNull();
  });

  it('WeChat signs in with an accepted code and goes to /token', async () => {
    const server = fakeServer({ 'GET /api/oauth/wechat': () => ({ body: { success: true, data: user } }) });
    const { router } = await show({ wechat_login: true });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with WeChat' }));
    await userEvent.type(dialog().getByLabelText('Verification code'), ' 4321 {Enter}');
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(server.calls.map((c) => c.url)).toEqual(['/api/oauth/wechat?code=4321']);
    expect(getSessionUser()).toEqual(user);
  });

  it("Telegram shows Telegram's widget for the bot and signs in with the fields it hands over", async () => {
    const server = fakeServer({
      'GET /api/oauth/telegram/login': () => ({ body: { success: true, data: { ...user, id: 9 } } }),
    });
    const { router } = await show({ telegram_oauth: true, telegram_bot_name: 'turnpike_bot' });
    expect(document.querySelector('script[src*="telegram"]')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with Telegram' }));
    const script = screen.getByTestId('telegram-widget').querySelector('script');
    expect(script?.getAttribute('src')).toBe('https://telegram.org/js/telegram-widget.js?22');
    expect(script?.dataset.telegramLogin).toBe('turnpike_bot');
    expect(script?.dataset.size).toBe('large');
    expect(script?.dataset.onauth).toBe('turnpikeTelegramAuth(user)');
    act(() => window.turnpikeTelegramAuth?.({ id: 99, auth_date: 1700000000, hash: 'abc' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(server.calls.map((c) => c.url)).toEqual([
      '/api/oauth/telegram/login?id=99&auth_date=1700000000&hash=abc',
    ]);
    expect(getSessionUser()?.id).toBe(9);
  });

  it('Telegram without a bot name says it is not configured and shows no widget', async () => {
    fakeServer({});
    await show({ telegram_oauth: true, telegram_bot_name: '' });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in with Telegram' }));
    expect(await screen.findByText(/not fully configured/)).toBeTruthy();
    expect(screen.queryByTestId('telegram-widget')).toBeNull();
  });
});

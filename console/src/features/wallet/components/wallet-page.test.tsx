import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { type FakeCall, fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { WalletPage } from './wallet-page.tsx';

const PAY_URL = 'https://pay.example.com/submit.php';
const PAY_FIELDS = {
  pid: '1001',
  type: 'wxpay',
  out_trade_no: 'USR1NOabc1231700000000',
  money: '73.00',
  sign: 'deadbeef',
  sign_type: 'MD5',
};

interface Options {
  status?: Partial<SiteStatus>;
  redeem?: (call: FakeCall) => { status?: number; body: unknown };
  pay?: (call: FakeCall) => { status?: number; body: unknown };
}

function serve({ status = {}, redeem, pay }: Options = {}) {
  let quota = 1_000_000;
  return fakeServer({
    'GET /api/status': () => ({
      body: { success: true, data: makeStatus({ enable_online_topup: true, ...status }) },
    }),
    'GET /api/user/self': () => ({
      body: { success: true, data: { id: 1, quota, used_quota: 250_000, request_count: 12 } },
    }),
    'POST /api/user/topup':
      redeem ??
      (() => {
        quota += 500_000;
        return { body: { success: true, message: 'redeemed', data: 500_000 } };
      }),
    'POST /api/user/amount': (call) => {
      const { amount } = call.body as { amount: number };
      return { body: { success: true, message: 'success', data: (amount * 7.3).toFixed(2) } };
    },
    'POST /api/user/pay':
      pay ?? (() => ({ body: { success: true, message: 'success', data: PAY_FIELDS, url: PAY_URL } })),
  });
}

/** Records every form the page submits, with the document it was submitted in. */
function captureSubmits() {
  const forms: { action: string; method: string; fields: Record<string, string>; doc: Document }[] = [];
  vi.spyOn(HTMLFormElement.prototype, 'submit').mockImplementation(function (this: HTMLFormElement) {
    forms.push({
      action: this.action,
      method: this.method,
      fields: Object.fromEntries(
        Array.from(this.querySelectorAll('input')).map((input) => [input.name, input.value]),
      ),
      doc: this.ownerDocument,
    });
  });
  return forms;
}

/** A stand-in for the blank window the page opens for the payment site. */
function fakePopup() {
  const popup = {
    document: document.implementation.createHTMLDocument(''),
    closed: false,
    opener: {},
    close: vi.fn(),
  };
  const open = vi.spyOn(window, 'open').mockReturnValue(popup as unknown as Window);
  return { popup, open };
}

const balance = () => screen.getByTestId('wallet-balance').textContent;

describe('wallet page', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });

  it('shows the balance, used quota and request count', async () => {
    serve();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    expect(screen.getByText('$0.50')).toBeTruthy();
    expect(screen.getByText('12')).toBeTruthy();
  });

  it('refuses an empty code without calling the server', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    await user.type(screen.getByLabelText('Redemption code'), '   ');
    await user.click(screen.getByRole('button', { name: 'Redeem' }));
    expect((await screen.findAllByText('Please enter the redemption code!')).length).toBeGreaterThan(0);
    expect(server.callsTo('POST', '/api/user/topup')).toHaveLength(0);
  });

  it('redeems a code, says how much was added and refreshes the balance', async () => {
    const server = serve();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    await user.type(screen.getByLabelText('Redemption code'), ' 0123456789abcdef0123456789abcdef ');
    await user.click(screen.getByRole('button', { name: 'Redeem' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/user/topup')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/user/topup')[0]?.body).toEqual({
      key: '0123456789abcdef0123456789abcdef',
    });
    expect(await screen.findByText('Redeemed successfully, quota added: $1.00')).toBeTruthy();
    await waitFor(() => expect(balance()).toBe('$3.00'));
    expect((screen.getByLabelText('Redemption code') as HTMLInputElement).value).toBe('');
  });

  it("shows the server's reason when a code cannot be redeemed", async () => {
    serve({
      redeem: () => ({
        status: 400,
        body: { success: false, message: 'this redemption code is invalid or has already been used' },
      }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    await user.type(screen.getByLabelText('Redemption code'), 'used-code');
    await user.click(screen.getByRole('button', { name: 'Redeem' }));
    expect(
      (await screen.findAllByText('this redemption code is invalid or has already been used')).length,
    ).toBeGreaterThan(0);
    expect(balance()).toBe('$2.00');
  });

  it('opens the top-up link, or says that none is set', async () => {
    serve({ status: { top_up_link: 'https://shop.example.com/codes' } });
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    await user.click(screen.getByRole('button', { name: 'Buy a redemption code' }));
    expect(open).toHaveBeenCalledWith('https://shop.example.com/codes', '_blank', 'noopener,noreferrer');
  });

  it('says so when the super admin has set no top-up link', async () => {
    serve();
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    await user.click(screen.getByRole('button', { name: 'Buy a redemption code' }));
    expect(await screen.findByText('Super admin has not set a top-up link!')).toBeTruthy();
    expect(open).not.toHaveBeenCalled();
  });

  it('says online top-up is off when the admin has not enabled it', async () => {
    const server = serve({ status: { enable_online_topup: false } });
    await renderScreen(() => <WalletPage />);
    await waitFor(() => expect(balance()).toBe('$2.00'));
    expect(screen.getByRole('note').textContent).toBe('Admin has not enabled online top-up!');
    expect(screen.queryByRole('button', { name: 'Alipay' })).toBeNull();
    expect(server.callsTo('POST', '/api/user/amount')).toHaveLength(0);
  });

  it('starts at the minimum top-up and shows the payable amount from the server', async () => {
    const server = serve({ status: { min_topup: 5 } });
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    const amount = (await screen.findByLabelText('Top-up amount (USD)')) as HTMLInputElement;
    await waitFor(() => expect(amount.value).toBe('5'));
    expect(screen.getByText('Minimum top-up: 5')).toBeTruthy();
    expect((await screen.findByTestId('payable')).textContent).toBe('Amount to pay: ¥36.50');
    await user.clear(amount);
    await user.type(amount, '10');
    await waitFor(() => expect(screen.getByTestId('payable').textContent).toBe('Amount to pay: ¥73.00'));
    expect(screen.getByText(/You receive \$10\.00/)).toBeTruthy();
    const bodies = server.callsTo('POST', '/api/user/amount').map((c) => c.body);
    expect(bodies).toContainEqual({ amount: 10, top_up_code: '' });
    // nothing is asked for the half-typed "1" below the minimum
    expect(bodies).not.toContainEqual({ amount: 1, top_up_code: '' });
  });

  it('refuses an amount below the minimum', async () => {
    const server = serve({ status: { min_topup: 5 } });
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    const amount = (await screen.findByLabelText('Top-up amount (USD)')) as HTMLInputElement;
    await waitFor(() => expect(amount.value).toBe('5'));
    await user.clear(amount);
    await user.type(amount, '3');
    expect(await screen.findByText('Top-up amount cannot be less than 5')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Alipay' }));
    expect((await screen.findAllByText('Top-up amount cannot be less than 5')).length).toBe(2);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(server.callsTo('POST', '/api/user/pay')).toHaveLength(0);
    expect(server.callsTo('POST', '/api/user/amount').map((c) => c.body)).not.toContainEqual({
      amount: 3,
      top_up_code: '',
    });
  });

  it('raises an amount below 1 to 1', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    const amount = (await screen.findByLabelText('Top-up amount (USD)')) as HTMLInputElement;
    await user.clear(amount);
    await user.type(amount, '0');
    await user.tab();
    expect(amount.value).toBe('1');
    await user.clear(amount);
    await user.type(amount, '-7');
    await user.tab();
    expect(amount.value).toBe('1');
  });

  it('counts the minimum in quota units when quota is not shown as money', async () => {
    serve({ status: { display_in_currency: false, min_topup: 2 } });
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    const amount = (await screen.findByLabelText('Top-up amount (quota units)')) as HTMLInputElement;
    await waitFor(() => expect(amount.value).toBe('1000000'));
    await user.clear(amount);
    await user.type(amount, '999999');
    expect(await screen.findByText('Top-up amount cannot be less than 1,000,000')).toBeTruthy();
  });

  it('pays: confirms, asks the server for the form and posts it to the payment site in a new window', async () => {
    const server = serve();
    const forms = captureSubmits();
    const { popup, open } = fakePopup();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    const amount = (await screen.findByLabelText('Top-up amount (USD)')) as HTMLInputElement;
    await user.clear(amount);
    await user.type(amount, '10');
    await user.click(screen.getByRole('button', { name: 'WeChat Pay' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm the top-up' });
    expect(dialog.textContent).toContain('$10.00');
    expect(dialog.textContent).toContain('¥73.00');
    expect(dialog.textContent).toContain('WeChat Pay');
    expect(server.callsTo('POST', '/api/user/pay')).toHaveLength(0);
    await user.click(within(dialog).getByRole('button', { name: 'Pay' }));
    await waitFor(() => expect(forms).toHaveLength(1));
    expect(open).toHaveBeenCalledTimes(1);
    expect(popup.opener).toBeNull();
    expect(server.callsTo('POST', '/api/user/pay')[0]?.body).toEqual({
      amount: 10,
      top_up_code: '',
      payment_method: 'wx',
    });
    expect(forms[0]).toMatchObject({ action: PAY_URL, method: 'post', fields: PAY_FIELDS });
    expect(forms[0]?.doc).toBe(popup.document);
    expect(popup.document.querySelectorAll('input[type="hidden"]')).toHaveLength(6);
    expect(await screen.findByText(/The payment page opened in a new tab/)).toBeTruthy();
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('pays in this tab when the browser blocks the new window', async () => {
    const server = serve();
    const forms = captureSubmits();
    vi.spyOn(window, 'open').mockReturnValue(null);
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await screen.findByTestId('payable');
    await user.click(screen.getByRole('button', { name: 'Alipay' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Pay' }));
    await waitFor(() => expect(forms).toHaveLength(1));
    expect(server.callsTo('POST', '/api/user/pay')[0]?.body).toMatchObject({
      amount: 1,
      payment_method: 'zfb',
    });
    expect(forms[0]?.doc).toBe(document);
    expect(forms[0]?.action).toBe(PAY_URL);
  });

  it("closes the new window and shows the server's message when the payment cannot start", async () => {
    serve({
      pay: () => ({ status: 400, body: { success: false, message: 'admin has not enabled online top-up!' } }),
    });
    const forms = captureSubmits();
    const { popup } = fakePopup();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await screen.findByTestId('payable');
    await user.click(screen.getByRole('button', { name: 'Alipay' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Pay' }));
    expect(await screen.findByText('admin has not enabled online top-up!')).toBeTruthy();
    expect(popup.close).toHaveBeenCalled();
    expect(forms).toHaveLength(0);
  });

  it('says the request failed when the pay call does not reach the server', async () => {
    serve();
    const forms = captureSubmits();
    fakePopup();
    const user = userEvent.setup();
    await renderScreen(() => <WalletPage />);
    await screen.findByTestId('payable');
    await user.click(screen.getByRole('button', { name: 'Alipay' }));
    const dialog = await screen.findByRole('dialog');
    const realFetch = globalThis.fetch;
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input) === '/api/user/pay') throw new TypeError('Failed to fetch');
        return realFetch(input, init);
      }),
    );
    await user.click(within(dialog).getByRole('button', { name: 'Pay' }));
    expect(await screen.findByText('Request failed')).toBeTruthy();
    expect(forms).toHaveLength(0);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logs, topUps } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { epaySign, verifyEpaySign } from '@turnpike/core/payment/epay';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

const MERCHANT_ID = '1001';
const MERCHANT_KEY = 'epay-merchant-key-0123456789';

interface FakeEpay {
  url: string;
  server: Server;
  /** How the next notify is sent back. */
  notifyMethod: 'GET' | 'POST';
  /** Every notify this fake sent, with what the gateway answered. */
  sent: { params: Record<string, string>; answer: string }[];
}

/**
 * A local Epay site: `/submit.php` takes the form the browser would post, checks its signature as Epay does,
 * "pays" it and calls the order's notify_url with Epay's real parameters and signature.
 */
async function startFakeEpay(): Promise<FakeEpay> {
  const fake: FakeEpay = { url: '', server: createServer(), notifyMethod: 'GET', sent: [] };
  fake.server.on('request', (request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', async () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      if (request.url !== '/submit.php' || form.pid !== MERCHANT_ID || !verifyEpaySign(form, MERCHANT_KEY)) {
        response.writeHead(400).end('sign error');
        return;
      }
      const params: Record<string, string> = {
        pid: form.pid!,
        trade_no: `2026${Math.floor(Math.random() * 1e9)}`,
        out_trade_no: form.out_trade_no!,
        type: form.type!,
        name: form.name!,
        money: form.money!,
        trade_status: 'TRADE_SUCCESS',
      };
      params.sign = epaySign(params, MERCHANT_KEY);
      params.sign_type = 'MD5';
      const query = new URLSearchParams(params).toString();
      const notified =
        fake.notifyMethod === 'GET'
          ? await fetch(`${form.notify_url}?${query}`)
          : await fetch(form.notify_url!, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: query,
            });
      const answer = await notified.text();
      fake.sent.push({ params, answer });
      response.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  return fake;
}

describe('wallet: online top-up through Epay', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let epay: FakeEpay;
  let gateway: string;

  async function setOption(key: string, value: string) {
    const response = await root.put('/api/option/', { key, value });
    expect(response.json().success, response.body).toBe(true);
  }

  async function submitToEpay(form: { url: string; data: Record<string, string> }): Promise<string> {
    const response = await fetch(form.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form.data).toString(),
    });
    return response.text();
  }

  async function quotaOf(client: ConsoleClient): Promise<number> {
    return (await client.get('/api/user/self')).json().data.quota;
  }

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    gateway = await t.app.listen({ port: 0, host: '127.0.0.1' });
    epay = await startFakeEpay();
  });
  afterAll(async () => {
    await new Promise((resolve) => epay.server.close(resolve));
    await t.close();
  });

  it('refuses to start a payment while online top-up is not configured', async () => {
    const user = await registerUser(t.app, 'early');
    const response = await user.post('/api/user/pay', { amount: 10, payment_method: 'zfb' });
    expect(response.json()).toMatchObject({
      success: false,
      message: 'admin has not enabled online top-up!',
    });
    expect(await t.runtime.deps.db.select().from(topUps)).toHaveLength(0);
  });

  it('quotes the payable amount with Price, the group ratio and the minimum', async () => {
    await setOption('Price', '7.3');
    await setOption('MinTopUp', '5');
    await setOption('TopupGroupRatio', JSON.stringify({ default: 0.9, vip: 1 }));
    const user = await registerUser(t.app, 'quote');
    expect((await user.post('/api/user/amount', { amount: 10 })).json()).toMatchObject({
      success: true,
      data: '65.70',
    });
    const low = await user.post('/api/user/amount', { amount: 4 });
    expect(low.statusCode).toBe(400);
    expect(low.json().message).toBe('top-up amount cannot be less than 5');
    expect((await user.post('/api/user/amount', { amount: 'ten' })).json().success).toBe(false);
    await setOption('TopupGroupRatio', JSON.stringify({ default: 1 }));
    await setOption('MinTopUp', '1');
  });

  it('pays through the fake Epay, which calls back on GET; the order is credited once', async () => {
    await setOption('ServerAddress', gateway);
    await setOption('PayAddress', epay.url);
    await setOption('EpayId', MERCHANT_ID);
    await setOption('EpayKey', MERCHANT_KEY);
    const user = await registerUser(t.app, 'payer');
    const pay = await user.post('/api/user/pay', { amount: 10, payment_method: 'zfb' });
    expect(pay.json()).toMatchObject({ success: true, message: 'success', url: `${epay.url}/submit.php` });
    const form = pay.json().data;
    expect(form).toMatchObject({
      pid: MERCHANT_ID,
      type: 'alipay',
      money: '73.00',
      name: 'TUC10',
      notify_url: `${gateway}/api/user/epay/notify`,
      return_url: `${gateway}/log`,
      sign_type: 'MD5',
    });
    expect(pay.body).not.toContain(MERCHANT_KEY);
    const [order] = await t.runtime.deps.db
      .select()
      .from(topUps)
      .where(eq(topUps.tradeNo, form.out_trade_no));
    expect(order).toMatchObject({ status: 'pending', amount: 10, money: 73, userId: user.userId });

    expect(await submitToEpay({ url: pay.json().url, data: form })).toBe('success');
    expect(await quotaOf(user)).toBe(5_000_000);
    const [done] = await t.runtime.deps.db.select().from(topUps).where(eq(topUps.tradeNo, form.out_trade_no));
    expect(done?.status).toBe('success');
    expect(done?.completeTime).toBeGreaterThan(0);

    // Epay repeats its notify until it reads "success": the repeats, even concurrent, credit nothing more.
    const last = epay.sent.at(-1)!;
    const repeats = await Promise.all(
      Array.from({ length: 5 }, () =>
        fetch(`${gateway}/api/user/epay/notify?${new URLSearchParams(last.params)}`),
      ),
    );
    for (const repeat of repeats) expect(await repeat.text()).toBe('success');
    expect(await quotaOf(user)).toBe(5_000_000);
    const topUpLogs = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.userId!), eq(logs.type, LogType.TopUp)));
    expect(topUpLogs).toHaveLength(1);
  });

  it('accepts the notify as a form POST too', async () => {
    epay.notifyMethod = 'POST';
    const user = await registerUser(t.app, 'poster');
    const pay = await user.post('/api/user/pay', { amount: 2, payment_method: 'wx' });
    expect(pay.json().data.type).toBe('wxpay');
    expect(await submitToEpay({ url: pay.json().url, data: pay.json().data })).toBe('success');
    expect(await quotaOf(user)).toBe(1_000_000);
    epay.notifyMethod = 'GET';
  });

  it('credits nothing for a forged, tampered or unknown notify', async () => {
    const user = await registerUser(t.app, 'victim');
    const pay = await user.post('/api/user/pay', { amount: 3, payment_method: 'zfb' });
    const tradeNo: string = pay.json().data.out_trade_no;
    const base = {
      pid: MERCHANT_ID,
      trade_no: '999',
      out_trade_no: tradeNo,
      type: 'alipay',
      name: 'TUC3',
      money: '21.90',
      trade_status: 'TRADE_SUCCESS',
    };
    const notify = (params: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/api/user/epay/notify?${new URLSearchParams(params)}` });
    const forged = await notify({ ...base, sign: epaySign(base, 'not-the-key'), sign_type: 'MD5' });
    expect(forged.body).toBe('fail');
    const unsigned = await notify(base);
    expect(unsigned.body).toBe('fail');
    const signed = { ...base, sign: epaySign(base, MERCHANT_KEY), sign_type: 'MD5' };
    expect((await notify({ ...signed, money: '0.01' })).body).toBe('fail');
    const unknown = { ...base, out_trade_no: 'USR1NOnope1' };
    expect((await notify({ ...unknown, sign: epaySign(unknown, MERCHANT_KEY), sign_type: 'MD5' })).body).toBe(
      'fail',
    );
    const cheap = { ...base, money: '0.01' };
    expect((await notify({ ...cheap, sign: epaySign(cheap, MERCHANT_KEY), sign_type: 'MD5' })).body).toBe(
      'fail',
    );
    expect(await quotaOf(user)).toBe(0);
    const [order] = await t.runtime.deps.db.select().from(topUps).where(eq(topUps.tradeNo, tradeNo));
    expect(order?.status).toBe('pending');
    // The genuine notify still goes through afterwards.
    expect((await notify(signed)).body).toBe('success');
    expect(await quotaOf(user)).toBe(1_500_000);
  });

  it('validates the payment request', async () => {
    const user = await registerUser(t.app, 'picky');
    const bad = await user.post('/api/user/pay', { amount: 10, payment_method: 'bitcoin' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/payment_method must be one of/);
    await setOption('MinTopUp', '20');
    const low = await user.post('/api/user/pay', { amount: 10, payment_method: 'zfb' });
    expect(low.json().message).toBe('top-up amount cannot be less than 20');
    await setOption('MinTopUp', '1');
    expect(
      (await t.runtime.deps.db.select().from(topUps).where(eq(topUps.userId, user.userId!))).length,
    ).toBe(0);
  });

  it('requires sign-in for the wallet calls', async () => {
    for (const url of ['/api/user/topup', '/api/user/amount', '/api/user/pay'])
      expect((await t.app.inject({ method: 'POST', url, payload: {} })).statusCode).toBe(401);
  });
});

/**
 * Subscription plans through the console API (docs/adr/0049): an administrator sells a plan, a user buys it through
 * Stripe Checkout (a local stand-in of Stripe's API that reads its real wire: form-encoded requests, its JSON
 * objects back), Stripe's webhook (signed with Stripe's library's own test-header helper) completes the order once;
 * replayed, forged, altered and underpaid events change nothing; the subscription expires on time, once, whoever runs
 * the job; Creem's signed webhook the same.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logs, subscriptionOrders, topUps, userSubscriptions, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';
import { createPlanService } from './plans.service.ts';

const WEBHOOK_SECRET = 'whsec_test_secret_for_plans';
const STRIPE_KEY = 'sk_test_51PlansStandIn';
const CREEM_SECRET = 'creem_whsec_plans';

/** What the stand-in of Stripe's API saw: each Checkout Session request, form-decoded. */
interface SeenCheckout {
  readonly authorization: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly contentType: string | undefined;
  readonly form: URLSearchParams;
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => resolve(body));
  });

/**
 * `POST /v1/checkout/sessions` as Stripe answers it (https://docs.stripe.com/api/checkout/sessions/object): a
 * `checkout.session` object with its `url`; Creem's `POST /v1/checkouts` with `checkout_url`.
 */
function startProviders(): Promise<{
  server: Server;
  url: string;
  port: number;
  seen: SeenCheckout[];
  creem: unknown[];
}> {
  const seen: SeenCheckout[] = [];
  const creem: unknown[] = [];
  let n = 0;
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method === 'POST' && request.url === '/v1/checkout/sessions') {
      const form = new URLSearchParams(body);
      seen.push({
        authorization: request.headers.authorization,
        idempotencyKey: request.headers['idempotency-key'] as string | undefined,
        contentType: request.headers['content-type'],
        form,
      });
      n += 1;
      const id = `cs_test_a1${n}`;
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${n}` }).end(
        JSON.stringify({
          id,
          object: 'checkout.session',
          mode: 'payment',
          status: 'open',
          payment_status: 'unpaid',
          client_reference_id: form.get('client_reference_id'),
          currency: form.get('line_items[0][price_data][currency]'),
          amount_total: Number(form.get('line_items[0][price_data][unit_amount]')),
          url: `https://checkout.stripe.com/c/pay/${id}`,
          metadata: { trade_no: form.get('metadata[trade_no]') },
        }),
      );
      return;
    }
    if (request.method === 'POST' && request.url === '/v1/checkouts') {
      creem.push({ apiKey: request.headers['x-api-key'], body: JSON.parse(body) });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: 'ch_1', checkout_url: 'https://www.creem.io/test/checkout/prod_1/ch_1' }));
      return;
    }
    response
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"error":{"message":"no such route"}}');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, port, seen, creem });
    }),
  );
}

let t: TestApp;
let root: ConsoleClient;
let providers: Awaited<ReturnType<typeof startProviders>>;
let clock = 1_795_910_340; // 2026-11-28 23:59:00 UTC

const db = () => t.runtime.deps.db;

/** A `checkout.session.*` event as Stripe sends it (https://docs.stripe.com/api/events/object). */
function sessionEvent(type: string, session: Record<string, unknown>, id = `evt_${Math.random()}`): string {
  return JSON.stringify({
    id,
    object: 'event',
    api_version: '2025-10-29.clover',
    created: clock,
    type,
    data: { object: { object: 'checkout.session', mode: 'payment', ...session } },
  });
}

const signed = (payload: string, secret = WEBHOOK_SECRET) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret });

const postWebhook = (payload: string, signature: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/stripe/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    payload,
  });

async function createPlan(fields: Record<string, unknown> = {}): Promise<number> {
  const created = await root.post('/api/subscription/admin/plans', {
    plan: {
      title: 'Pro monthly',
      subtitle: 'for coding agents',
      price_amount: 9.99,
      currency: 'USD',
      duration_unit: 'month',
      duration_value: 1,
      total_amount: 5_000_000,
      quota_reset_period: 'daily',
      upgrade_group: 'vip',
      ...fields,
    },
  });
  expect(created.json()).toMatchObject({ success: true });
  return created.json().data.id as number;
}

const subscriptionsOf = (userId: number) =>
  db().select().from(userSubscriptions).where(eq(userSubscriptions.userId, userId));

beforeAll(async () => {
  providers = await startProviders();
  t = await createTestApp({
    env: { GLOBAL_API_RATE_LIMIT: '100000', CRITICAL_RATE_LIMIT: '1000' },
    now: () => clock,
    paymentEndpoints: {
      stripeEndpoint: { host: '127.0.0.1', port: providers.port, protocol: 'http' },
      creemEndpoint: providers.url,
    },
  });
  root = await setupRoot(t.app);
  await saveOption(root, 'ServerAddress', 'https://gateway.example.com');
  await saveOption(root, 'StripeApiSecret', STRIPE_KEY);
  await saveOption(root, 'StripeWebhookSecret', WEBHOOK_SECRET);
});

afterAll(async () => {
  await t?.close();
  providers?.server.close();
});

describe('plans bought through Stripe Checkout', () => {
  it("opens a Checkout Session on Stripe's wire and completes the order once from the signed webhook", async () => {
    const planId = await createPlan();
    const user = await registerUser(t.app, 'stripebuyer');
    const listed = await user.get('/api/subscription/plans');
    expect(listed.json().data).toEqual([
      expect.objectContaining({ plan: expect.objectContaining({ id: planId, price_amount: 9.99 }) }),
    ]);

    const pay = await user.post('/api/subscription/stripe/pay', { plan_id: planId });
    expect(pay.json()).toMatchObject({
      success: true,
      data: { pay_link: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/) },
    });
    const request = providers.seen.at(-1) as SeenCheckout;
    // Stripe's wire: a form-encoded body, the secret key as a bearer token, an idempotency key.
    expect(request.contentType).toBe('application/x-www-form-urlencoded');
    expect(request.authorization).toBe(`Bearer ${STRIPE_KEY}`);
    expect(request.idempotencyKey).toMatch(/^checkout-SUB/);
    expect(request.form.get('mode')).toBe('payment');
    expect(request.form.get('line_items[0][quantity]')).toBe('1');
    expect(request.form.get('line_items[0][price_data][currency]')).toBe('usd');
    // $9.99 is 999 cents.
    expect(request.form.get('line_items[0][price_data][unit_amount]')).toBe('999');
    expect(request.form.get('line_items[0][price_data][product_data][name]')).toBe('Pro monthly');
    const tradeNo = request.form.get('client_reference_id') as string;
    expect(request.form.get('success_url')).toBe(`https://gateway.example.com/topup?plan_order=${tradeNo}`);
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(0);

    const paid = sessionEvent('checkout.session.completed', {
      id: 'cs_test_a11',
      client_reference_id: tradeNo,
      amount_total: 999,
      currency: 'usd',
      payment_status: 'paid',
      status: 'complete',
    });
    const first = await postWebhook(paid, signed(paid));
    expect(first.statusCode).toBe(200);
    const subs = await subscriptionsOf(user.userId ?? 0);
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({
      planId,
      amountTotal: 5_000_000,
      status: 'active',
      source: 'order',
      startTime: clock,
      // One calendar month from 2026-11-28 23:59:00 UTC: 2026-12-28 23:59:00 UTC.
      endTime: 1_798_502_340,
      upgradeGroup: 'vip',
      prevUserGroup: 'default',
    });
    const [row] = await db()
      .select()
      .from(users)
      .where(eq(users.id, user.userId ?? 0));
    expect(row?.group).toBe('vip');
    // The wallet is not credited by a plan.
    expect(row?.quota).toBe(0);

    // Stripe retries (and an attacker replays) the same event: 8 at once change nothing more.
    const again = await Promise.all(Array.from({ length: 8 }, () => postWebhook(paid, signed(paid))));
    for (const answer of again) expect(answer.statusCode).toBe(200);
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(1);
    expect(await db().select().from(topUps).where(eq(topUps.tradeNo, tradeNo))).toHaveLength(1);
    const bought = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.userId ?? 0), eq(logs.type, LogType.TopUp)));
    expect(bought).toHaveLength(1);
    expect(bought[0]?.content).toContain('Pro monthly');

    const self = await user.get('/api/subscription/self');
    expect(self.json().data).toMatchObject({
      billing_preference: 'subscription_first',
      subscriptions: [
        { subscription: { plan_id: planId, amount_total: 5_000_000, amount_used: 0, status: 'active' } },
      ],
    });
  });

  it('refuses forged, altered, stale and underpaid events and changes nothing', async () => {
    const planId = await createPlan({ title: 'Forgery bait', upgrade_group: '' });
    const user = await registerUser(t.app, 'forgery');
    await user.post('/api/subscription/stripe/pay', { plan_id: planId });
    const tradeNo = providers.seen.at(-1)?.form.get('client_reference_id') as string;
    const paid = sessionEvent('checkout.session.completed', {
      id: 'cs_test_forged',
      client_reference_id: tradeNo,
      amount_total: 999,
      currency: 'usd',
      payment_status: 'paid',
    });

    // Signed with another secret.
    expect((await postWebhook(paid, signed(paid, 'whsec_not_ours'))).statusCode).toBe(400);
    // No signature at all.
    expect((await postWebhook(paid, '')).statusCode).toBe(400);
    // A genuine signature over another body.
    const cheaper = paid.replace('"amount_total":999', '"amount_total":1');
    expect((await postWebhook(cheaper, signed(paid))).statusCode).toBe(400);
    // A genuine signature made an hour ago (Stripe's tolerance is five minutes).
    const stale = Stripe.webhooks.generateTestHeaderString({
      payload: paid,
      secret: WEBHOOK_SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect((await postWebhook(paid, stale)).statusCode).toBe(400);
    // Genuinely signed, but paying 1 cent for a 999-cent order.
    expect((await postWebhook(cheaper, signed(cheaper))).statusCode).toBe(400);
    // Genuinely signed, paid in another currency.
    const yen = paid.replace('"currency":"usd"', '"currency":"jpy"');
    expect((await postWebhook(yen, signed(yen))).statusCode).toBe(400);

    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(0);
    const [order] = await db()
      .select()
      .from(subscriptionOrders)
      .where(eq(subscriptionOrders.tradeNo, tradeNo));
    expect(order?.status).toBe('pending');

    // A session that expired unpaid ends the order; a later "paid" event for it grants nothing.
    const expired = sessionEvent('checkout.session.expired', {
      id: 'cs_test_forged',
      client_reference_id: tradeNo,
      payment_status: 'unpaid',
    });
    expect((await postWebhook(expired, signed(expired))).statusCode).toBe(200);
    expect((await postWebhook(paid, signed(paid))).statusCode).toBe(200);
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(0);
  });

  it('refuses a plan that is off sale, and bad input, in the envelope', async () => {
    const planId = await createPlan({ title: 'Retired' });
    expect(
      (await root.request('PATCH', `/api/subscription/admin/plans/${planId}`, { enabled: false })).json(),
    ).toMatchObject({ success: true, data: { enabled: false } });
    const user = await registerUser(t.app, 'latebuyer');
    const before = providers.seen.length;
    const refused = await user.post('/api/subscription/stripe/pay', { plan_id: planId });
    expect(refused.json()).toMatchObject({ success: false, message: 'this plan is not on sale' });
    expect((await user.post('/api/subscription/stripe/pay', { plan_id: 'one' })).json().success).toBe(false);
    const badPlan = await root.post('/api/subscription/admin/plans', {
      plan: { title: 'x', price_amount: -1, duration_unit: 'month' },
    });
    expect(badPlan.json()).toMatchObject({ success: false });
    expect(providers.seen.length).toBe(before);
    // Users cannot manage plans.
    expect(
      (
        await user.post('/api/subscription/admin/plans', {
          plan: { title: 'mine', price_amount: 0, duration_unit: 'day' },
        })
      ).json().success,
    ).toBe(false);
  });
});

/**
 * Epay's MD5 signature as its merchant documentation states it, written here rather than taken from the product: every
 * parameter but `sign` and `sign_type` with a value, sorted by name, joined as `k=v` with `&`, the merchant key
 * appended, MD5 in lowercase hex.
 */
function epayMd5(params: Record<string, string>, key: string): string {
  const content = Object.keys(params)
    .filter((name) => name !== 'sign' && name !== 'sign_type' && params[name] !== '')
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
  return createHash('md5')
    .update(content + key)
    .digest('hex');
}

describe('plans bought through Epay', () => {
  const EPAY_KEY = 'epay-plan-merchant-key-0123';

  it('signs the order form as Epay checks it, and completes the order once from its signed notify', async () => {
    await saveOption(root, 'PayAddress', 'https://pay.example.com');
    await saveOption(root, 'EpayId', '1001');
    await saveOption(root, 'EpayKey', EPAY_KEY);
    const planId = await createPlan({ title: 'Epay monthly', price_amount: 12.5, currency: 'CNY' });
    const user = await registerUser(t.app, 'epaybuyer');
    const pay = await user.post('/api/subscription/epay/pay', { plan_id: planId, payment_method: 'alipay' });
    const answer = pay.json() as { success: boolean; url: string; data: Record<string, string> };
    expect(answer).toMatchObject({ success: true, url: 'https://pay.example.com/submit.php' });
    const form = answer.data;
    expect(form).toMatchObject({
      pid: '1001',
      type: 'alipay',
      money: '12.50',
      notify_url: 'https://gateway.example.com/api/subscription/epay/notify',
    });
    // The form is what Epay verifies: its signature under the merchant key, by Epay's rule.
    expect(form.sign).toBe(epayMd5(form, EPAY_KEY));
    const tradeNo = form.out_trade_no as string;

    const notify = (params: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/api/subscription/epay/notify?${new URLSearchParams(params)}` });
    const paid: Record<string, string> = {
      pid: '1001',
      trade_no: '2026112900001',
      out_trade_no: tradeNo,
      type: 'alipay',
      name: form.name as string,
      money: '12.50',
      trade_status: 'TRADE_SUCCESS',
      sign_type: 'MD5',
    };
    // Forged (another key) and underpaid notifies change nothing.
    const forged = await notify({ ...paid, sign: epayMd5(paid, 'not-the-merchant-key') });
    expect(forged.body).toBe('fail');
    const cheap = { ...paid, money: '1.00' };
    expect((await notify({ ...cheap, sign: epayMd5(cheap, EPAY_KEY) })).body).toBe('fail');
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(0);

    // The genuine notify, and Epay's retries of it (5 at once): one subscription, one top-up record.
    const genuine = { ...paid, sign: epayMd5(paid, EPAY_KEY) };
    const answers = await Promise.all(Array.from({ length: 6 }, () => notify(genuine)));
    for (const reply of answers) expect(reply.body).toBe('success');
    const subs = await subscriptionsOf(user.userId ?? 0);
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ planId, amountTotal: 5_000_000, status: 'active' });
    expect(await db().select().from(topUps).where(eq(topUps.tradeNo, tradeNo))).toHaveLength(1);
  });
});

describe('subscriptions end on time', () => {
  it('expires a subscription past its end once, across replicas running the job at once, and gives the group back', async () => {
    const planId = await createPlan({
      title: 'One day',
      duration_unit: 'day',
      duration_value: 1,
      upgrade_group: 'svip',
    });
    const user = await registerUser(t.app, 'dayuser');
    const granted = await root.post('/api/subscription/admin/bind', {
      user_id: user.userId,
      plan_id: planId,
    });
    expect(granted.json()).toMatchObject({
      success: true,
      data: { plan_id: planId, end_time: clock + 86_400 },
    });
    const group = async () =>
      (
        await db()
          .select()
          .from(users)
          .where(eq(users.id, user.userId ?? 0))
      )[0]?.group;
    expect(await group()).toBe('svip');

    // Three replicas of the API role on one database, each with the job's clock.
    const deps = { ...t.runtime.deps, now: () => clock };
    const replicas = [createPlanService(deps), createPlanService(deps), createPlanService(deps)];
    // A second before the end nothing expires.
    clock += 86_399;
    expect((await Promise.all(replicas.map((r) => r.expireDue()))).reduce((a, b) => a + b, 0)).toBe(0);
    clock += 1;
    const ended = await Promise.all(replicas.map((r) => r.expireDue()));
    expect(ended.reduce((a, b) => a + b, 0)).toBe(1);
    const [sub] = await subscriptionsOf(user.userId ?? 0);
    expect(sub?.status).toBe('expired');
    expect(await group()).toBe('default');
    const self = await user.get('/api/subscription/self');
    expect(self.json().data.subscriptions).toEqual([]);
    expect(self.json().data.all_subscriptions).toHaveLength(1);
  });

  it('an administrator ends a subscription early', async () => {
    const planId = await createPlan({ title: 'Cancelled', upgrade_group: '' });
    const user = await registerUser(t.app, 'cancelled');
    const granted = await root.post(`/api/subscription/admin/users/${user.userId}/subscriptions`, {
      plan_id: planId,
    });
    const id = granted.json().data.id as number;
    expect(
      (await root.post(`/api/subscription/admin/user_subscriptions/${id}/invalidate`)).json().success,
    ).toBe(true);
    expect(
      (await root.post(`/api/subscription/admin/user_subscriptions/${id}/invalidate`)).json().success,
    ).toBe(false);
    const [sub] = await subscriptionsOf(user.userId ?? 0);
    expect(sub).toMatchObject({ status: 'cancelled', endTime: clock });
  });
});

describe('plans bought through Creem', () => {
  it('opens a Creem checkout and completes the order once from its HMAC-signed webhook; a forged one changes nothing', async () => {
    await saveOption(root, 'CreemApiKey', 'creem_test_key');
    await saveOption(root, 'CreemWebhookSecret', CREEM_SECRET);
    const planId = await createPlan({ title: 'Creem plan', creem_product_id: 'prod_1', upgrade_group: '' });
    const user = await registerUser(t.app, 'creembuyer');
    const pay = await user.post('/api/subscription/creem/pay', { plan_id: planId });
    expect(pay.json()).toMatchObject({
      success: true,
      data: { checkout_url: 'https://www.creem.io/test/checkout/prod_1/ch_1' },
    });
    const sent = providers.creem.at(-1) as {
      apiKey: string;
      body: { product_id: string; request_id: string };
    };
    expect(sent.apiKey).toBe('creem_test_key');
    expect(sent.body.product_id).toBe('prod_1');
    const tradeNo = sent.body.request_id;
    // Creem's checkout.completed event (https://docs.creem.io/code/webhooks): amounts in cents.
    const event = JSON.stringify({
      id: 'evt_creem_1',
      eventType: 'checkout.completed',
      created_at: clock * 1000,
      object: {
        id: 'ch_1',
        object: 'checkout',
        request_id: tradeNo,
        order: { id: 'ord_1', amount: 999, currency: 'USD', status: 'paid' },
        product: { id: 'prod_1' },
        status: 'completed',
      },
    });
    const signature = createHmac('sha256', CREEM_SECRET).update(event).digest('hex');
    const post = (sig: string, body = event) =>
      t.app.inject({
        method: 'POST',
        url: '/api/creem/webhook',
        headers: { 'content-type': 'application/json', 'creem-signature': sig },
        payload: body,
      });
    expect((await post(createHmac('sha256', 'not-ours').update(event).digest('hex'))).statusCode).toBe(400);
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(0);
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(signature)));
    for (const answer of answers) expect(answer.statusCode).toBe(200);
    expect(await subscriptionsOf(user.userId ?? 0)).toHaveLength(1);
  });
});

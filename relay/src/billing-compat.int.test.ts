import { tokens, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep } from './testing/wait.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;

const get = (url: string, headers: Record<string, string>) => t.relay.inject({ method: 'GET', url, headers });

async function newCaller(
  quota: number,
  token: Parameters<RelayTestApp['seedToken']>[1] = { unlimitedQuota: false, remainQuota: 400_000 },
) {
  const user = await t.seedUser({ quota });
  const row = await t.seedToken(user.id, token);
  return { user, token: row, headers: { authorization: `Bearer sk-${row.key}` } };
}

/** One chat request, and the wait until the writer has stored its used quota. */
async function spend(caller: Awaited<ReturnType<typeof newCaller>>): Promise<number> {
  const response = await t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: caller.headers,
    payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(response.statusCode).toBe(200);
  const charged = Number(response.headers['x-turnpike-quota']);
  const { db } = t.runtime.deps;
  for (let i = 0; i < 100; i += 1) {
    const [row] = await db.select().from(users).where(eq(users.id, caller.user.id));
    if (row!.usedQuota === charged) break;
    await sleep(20);
  }
  return charged;
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.startRelay();
});

beforeEach(async () => {
  const { options } = t.runtime.deps;
  await options.set('DisplayTokenStatEnabled', 'true');
  await options.set('DisplayInCurrencyEnabled', 'true');
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('OpenAI billing compatibility routes', () => {
  it("reports the token's granted amount and usage in dollars, at both paths", async () => {
    const expiry = Math.floor(Date.now() / 1000) + 86_400;
    const caller = await newCaller(3_000_000, {
      unlimitedQuota: false,
      remainQuota: 400_000,
      expiredTime: expiry,
    });
    const charged = await spend(caller);
    expect(charged).toBeGreaterThan(0);
    for (const prefix of ['', '/v1']) {
      const subscription = await get(`${prefix}/dashboard/billing/subscription`, caller.headers);
      expect(subscription.statusCode).toBe(200);
      // Remaining + used is what the token was given, whatever it spent.
      expect(subscription.json()).toEqual({
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: 0.8,
        hard_limit_usd: 0.8,
        system_hard_limit_usd: 0.8,
        access_until: expiry,
      });
      const usage = await get(`${prefix}/dashboard/billing/usage`, caller.headers);
      expect(usage.statusCode).toBe(200);
      expect(usage.json().object).toBe('list');
      expect(usage.json().total_usage).toBeCloseTo((charged / 500_000) * 100, 10);
    }
  });

  it('shows 100000000 for an unlimited token and 0 for a token that never expires', async () => {
    const caller = await newCaller(3_000_000, { unlimitedQuota: true, remainQuota: 0 });
    const subscription = await get('/v1/dashboard/billing/subscription', caller.headers);
    expect(subscription.json()).toMatchObject({ hard_limit_usd: 100_000_000, access_until: 0 });
  });

  it("reports the owner's figures when token statistics are off, in quota when currency is off", async () => {
    const caller = await newCaller(3_000_000, { unlimitedQuota: true, remainQuota: 0 });
    const charged = await spend(caller);
    const { options, db } = t.runtime.deps;
    await options.set('DisplayTokenStatEnabled', 'false');
    const [user] = await db.select().from(users).where(eq(users.id, caller.user.id));
    expect(user!.quota + user!.usedQuota).toBe(3_000_000);

    const dollars = await get('/dashboard/billing/subscription', caller.headers);
    expect(dollars.json()).toMatchObject({ hard_limit_usd: 6, access_until: 0 });

    await options.set('DisplayInCurrencyEnabled', 'false');
    const quota = await get('/dashboard/billing/subscription', caller.headers);
    expect(quota.json()).toMatchObject({ hard_limit_usd: 3_000_000, soft_limit_usd: 3_000_000 });
    const usage = await get('/dashboard/billing/usage', caller.headers);
    expect(usage.json()).toEqual({ object: 'list', total_usage: charged * 100 });
  });

  it('follows spending from the token row', async () => {
    const caller = await newCaller(3_000_000);
    const { db } = t.runtime.deps;
    await db
      .update(tokens)
      .set({ usedQuota: 100_000, remainQuota: 150_000 })
      .where(eq(tokens.id, caller.token.id));
    const subscription = await get('/dashboard/billing/subscription', caller.headers);
    expect(subscription.json().hard_limit_usd).toBe(0.5);
    const usage = await get('/dashboard/billing/usage', caller.headers);
    expect(usage.json().total_usage).toBe(20);
  });

  it('answers 401 in OpenAI shape without a valid key', async () => {
    const none = await get('/dashboard/billing/subscription', {});
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toMatchObject({ code: 'invalid_api_key', type: 'invalid_request_error' });
    const wrong = await get('/v1/dashboard/billing/usage', {
      authorization: 'Bearer sk-wrongwrongwrongwrong',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.message).toContain('request id');
  });
});

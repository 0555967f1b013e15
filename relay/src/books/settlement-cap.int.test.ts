/**
 * The cap of settled calls waiting for the database (docs/adr/0022, billing.ts): while the database cannot take
 * them, a relay serves paid calls and queues their settlements (journaled in Redis, or spooled in DATA_DIR) up to
 * SETTLEMENT_QUEUE_MAX; past it a paid call is refused with a 503 and `Retry-After` in the caller's protocol, never
 * served unbilled. Once the database answers, every queued call is in the logs and the balance, and paid calls are
 * admitted again.
 *
 * On Postgres (TEST_POSTGRES_URL) the database goes away through a TCP proxy (new connections refused, open ones
 * reset); on the embedded database, which has no connection to cut, the writer is stalled behind a transaction
 * that holds the logs table.
 */
import { logs, users } from '@turnpike/core/db/schema/index';
import { startTcpProxy, type TcpProxy } from '@turnpike/core/testing/tcp-proxy';
import { createTestDatabaseUrl } from '@turnpike/core/testing/test-runtime';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

const CAP = 5;
/** `ModelPrice` 0.002 USD a call × QuotaPerUnit 500000. */
const PER_CALL = 1_000;

let t: RelayTestApp;
let fake: FakeOpenAi;
let proxy: TcpProxy | undefined;
let dropDatabase = async () => {};

beforeAll(async () => {
  fake = await startFakeOpenAi({});
  const created = await createTestDatabaseUrl();
  dropDatabase = created.drop;
  proxy = created.url ? await startTcpProxy(created.url) : undefined;
  t = await createRelayTestApp({
    ...(created.url && proxy ? { databaseUrl: proxy.urlThrough(created.url) } : {}),
    env: { SETTLEMENT_QUEUE_MAX: String(CAP) },
  });
  await t.runtime.deps.options.set('ModelPrice', JSON.stringify({ 'gpt-4o-mini': 0.002 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.startRelay();
}, 60_000);
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await fake?.close();
  await dropDatabase();
});

/** Takes the database from the writer; the returned function gives it back. */
async function takeDatabaseAway(): Promise<() => Promise<void>> {
  if (proxy) {
    const cut = proxy;
    await cut.refuse();
    cut.resetAll();
    return () => cut.restore();
  }
  const released = Promise.withResolvers<void>();
  const locked = Promise.withResolvers<void>();
  const holding = t.runtime.deps.db.transaction(async (tx) => {
    await tx.execute(sql`lock table logs in access exclusive mode`);
    locked.resolve();
    await released.promise;
  });
  await locked.promise;
  return async () => {
    released.resolve();
    await holding;
  };
}

const queued = async () =>
  Number(
    /^turnpike_settlement_queue_records (\S+)$/m.exec(
      (await t.relay.inject({ method: 'GET', url: '/metrics' })).body,
    )?.[1] ?? Number.NaN,
  );

describe('past the cap of settled calls waiting for the database', () => {
  it('refuses paid calls with a 503 and Retry-After in the caller’s protocol, and bills every call served once the database is back', async () => {
    const start = 1_000_000;
    const user = await t.seedUser({ quota: start });
    const token = await t.seedToken(user.id, { unlimitedQuota: true });
    const headers = { authorization: `Bearer sk-${token.key}` };
    const chat = () =>
      t.relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers,
        payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      });
    const messages = () =>
      t.relay.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: { ...headers, 'anthropic-version': '2023-06-01' },
        payload: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
      });
    // One call with the database there: its balance is known to the relay, its log written.
    expect((await chat()).statusCode).toBe(200);
    await waitFor(async () => ((await queued()) === 0 ? true : undefined));

    const giveBack = await takeDatabaseAway();
    let restored = false;
    try {
      const upstreamBefore = fake.requests.length;
      // Served and queued, one by one, up to the cap.
      for (let i = 0; i < CAP; i += 1) {
        const served = await chat();
        expect(served.statusCode, served.body).toBe(200);
      }
      expect(await queued()).toBe(CAP);
      // Past it: refused before any upstream is called, in OpenAI's shape on /v1/chat/completions ...
      const refused = await chat();
      expect(refused.statusCode).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.json()).toMatchObject({
        error: { type: 'server_error', code: 'gateway_degraded', message: expect.any(String) },
      });
      // ... and in Anthropic's on /v1/messages (https://docs.anthropic.com/en/api/errors).
      const refusedMessages = await messages();
      expect(refusedMessages.statusCode).toBe(503);
      expect(Number(refusedMessages.headers['retry-after'])).toBeGreaterThan(0);
      expect(refusedMessages.json()).toMatchObject({
        type: 'error',
        error: { type: expect.any(String), message: expect.any(String) },
      });
      expect(fake.requests.length - upstreamBefore, 'upstream calls made').toBe(CAP);
      await giveBack();
      restored = true;
    } finally {
      if (!restored) await giveBack();
    }

    // The database is back: the queue drains, and every call served is in the books exactly once.
    await waitFor(async () => ((await queued()) === 0 ? true : undefined), 20_000);
    const served = CAP + 1;
    const [row] = await t.runtime.deps.db.select().from(users).where(eq(users.id, user.id));
    const [logged] = await t.runtime.deps.db
      .select({
        count: sql<number>`count(*)`.mapWith(Number),
        quota: sql<number>`coalesce(sum(${logs.quota}), 0)`.mapWith(Number),
      })
      .from(logs)
      .where(eq(logs.userId, user.id));
    expect({
      deducted: start - (row?.quota ?? 0),
      usedQuota: row?.usedQuota,
      requests: row?.requestCount,
      logs: logged?.count,
      logged: logged?.quota,
    }).toEqual({
      deducted: served * PER_CALL,
      usedQuota: served * PER_CALL,
      requests: served,
      logs: served,
      logged: served * PER_CALL,
    });
    // Admitted again.
    expect((await chat()).statusCode).toBe(200);
  }, 60_000);
});

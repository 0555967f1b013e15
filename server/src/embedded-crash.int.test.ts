/**
 * The embedded default (`make run`: PGlite in DATA_DIR, no Redis) killed with SIGKILL under load and started
 * again on the same folder: every call it answered is billed once, the books agree (balance drop = consume logs =
 * used quota), and the payer is never served past the balance they had, before or after the crash. What the
 * killed process had settled but not yet written is in its local spool (DATA_DIR/settlements) and is written at
 * the next start (docs/adr/0022).
 *
 * The price is a per-call price set through the console API ($0.002 a call), so each call costs
 * 0.002 x 500000 = 1000 quota units by the documented rule (1 USD = 500000 units), not by the product's tables.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { freePort } from '@turnpike/core/testing/free-port';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleApi, signInAsRoot, startServerProcess, waitUntilReady } from './testing/cluster.ts';

/** $0.002 a call at 500000 units per USD. */
const PER_CALL = 1000;
/** Enough for 400 calls: the load runs the balance out after the restart. */
const START_BALANCE = 400 * PER_CALL;
const ROOT = { username: 'root', password: 'crash-root-pw-1' };

describe('the embedded default killed under load', () => {
  let dataDir: string;
  let upstream: FakeOpenAi;
  let server: ReturnType<typeof startServerProcess>;
  let payer: { userId: number; key: string };

  const openDatabase = () => createDb({ dataDir: path.join(dataDir, 'db') });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'turnpike-embedded-crash-'));
    upstream = await startFakeOpenAi({});
    server = startServerProcess('embedded', await freePort(), {
      DATA_DIR: dataDir,
      SESSION_SECRET: 'crash-session-secret-0123456789',
      CRYPTO_SECRET: 'crash-crypto-secret-0123456789',
      LOG_LEVEL: 'warn',
      GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
      CRITICAL_RATE_LIMIT_ENABLE: 'false',
      // The test's own Postgres and Redis are not this server's: it runs on the embedded default.
      DATABASE_URL: '',
      REDIS_URL: '',
    });
    await waitUntilReady(server.url, 90_000, () => server.child() === undefined);
    const admin = await signInAsRoot(server.url, ROOT);
    const api = consoleApi(
      () => server.url,
      () => admin,
    );
    await api('POST', '/api/channel/', {
      name: 'fake upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: upstream.url,
      models: 'crash-model',
      group: 'default',
    });
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify({ 'crash-model': 0.002 }) });
    // The payer and their key are written while the server is stopped (it holds the folder's lock while it runs).
    expect(await server.signal('SIGTERM')).toBe(0);
    const database = await openDatabase();
    try {
      await migrate(database);
      const user = await createUserRepo(database.db).insert({
        username: `crash-${randomBytes(4).toString('hex')}`,
        password: 'not-a-real-hash',
        quota: START_BALANCE,
      });
      const token = await createTokenRepo(database.db).insert({
        userId: user.id,
        key: generateTokenKey(),
        name: 'crash',
        remainQuota: 0,
        unlimitedQuota: true,
      });
      payer = { userId: user.id, key: `sk-${token.key}` };
    } finally {
      await database.close();
    }
    await server.restart();
  }, 180_000);

  afterAll(async () => {
    await server?.kill();
    await upstream?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('bills every answered call once after a SIGKILL and a restart, and never serves past the balance', async () => {
    /** Request ids of the calls answered 200 with their whole body, and how many were cut by the kill. */
    const answered: string[] = [];
    let cut = 0;
    let refused = 0;
    const call = async (): Promise<'served' | 'refused' | 'cut'> => {
      try {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${payer.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'crash-model', messages: [{ role: 'user', content: 'hello' }] }),
        });
        const body = await response.text();
        if (response.status === 200 && body.includes('"choices"')) {
          answered.push(response.headers.get('x-request-id') ?? '');
          return 'served';
        }
        refused += 1;
        return 'refused';
      } catch {
        cut += 1;
        return 'cut';
      }
    };
    /** Eight callers until `enough` is true or the gateway stops answering them (killed, or the balance is out). */
    const load = async (enough: () => boolean) => {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!enough()) if ((await call()) !== 'served') return;
        }),
      );
    };

    // Before the kill: about half the balance, then SIGKILL with calls in flight.
    let killed: Promise<number | null> | undefined;
    const before = load(() => {
      if (answered.length >= 200 && !killed) killed = server.signal('SIGKILL');
      return killed !== undefined;
    });
    await before;
    await killed;
    const answeredBeforeKill = answered.length;
    const inFlightAtKill = cut;
    expect(answeredBeforeKill).toBeGreaterThanOrEqual(200);

    // Started again on the same folder: the spool is written, the balance is what is left, and the load goes on
    // until the payer is refused for want of balance.
    await server.restart();
    await load(() => false);
    expect(refused).toBeGreaterThan(0);
    const out = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${payer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'crash-model', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(out.status).toBe(403);

    // A graceful stop writes what is queued and frees the folder for the test to read.
    expect(await server.signal('SIGTERM')).toBe(0);
    const database = await openDatabase();
    try {
      const { rows } = (await database.db.execute(
        sql.raw(`select u.quota, u.used_quota, u.request_count,
                (select coalesce(sum(quota), 0) from logs where user_id = u.id and type = 2) as logged,
                (select count(*) from logs where user_id = u.id and type = 2) as logs,
                (select count(*) from logs where user_id = u.id and type = 2 and quota <> ${PER_CALL}) as off_price,
                (select array_agg(request_id) from logs where user_id = u.id and type = 2) as request_ids,
                (select count(*) from (select 1 from logs where user_id = u.id and type = 2
                                        group by request_id having count(*) > 1) d) as duplicates
           from users u where u.id = ${payer.userId}`),
      )) as unknown as {
        rows: {
          quota: number;
          used_quota: number;
          request_count: number;
          logged: string;
          logs: string;
          off_price: string;
          request_ids: string[] | null;
          duplicates: string;
        }[];
      };
      const books = rows[0];
      if (!books) throw new Error('the payer is gone');
      const deducted = START_BALANCE - Number(books.quota);
      const logged = new Set(books.request_ids ?? []);
      const figures = {
        answered: answered.length,
        answeredBeforeKill,
        inFlightAtKill,
        logs: Number(books.logs),
        deducted,
        logged: Number(books.logged),
        usedQuota: Number(books.used_quota),
      };
      // Every answered call is logged, once; a call cut by the kill may have been billed (the server settled it
      // before the client got its answer), nothing else.
      expect(
        answered.filter((id) => !logged.has(id)),
        JSON.stringify(figures),
      ).toEqual([]);
      expect(Number(books.duplicates)).toBe(0);
      expect(Number(books.logs), JSON.stringify(figures)).toBeLessThanOrEqual(
        answered.length + inFlightAtKill,
      );
      // The books agree with each other and with the price.
      expect(Number(books.off_price)).toBe(0);
      expect(deducted, JSON.stringify(figures)).toBe(Number(books.logged));
      expect(Number(books.used_quota)).toBe(deducted);
      expect(Number(books.request_count)).toBe(Number(books.logs));
      // Served x price never exceeds the balance the payer had.
      expect(Number(books.logs) * PER_CALL).toBeLessThanOrEqual(START_BALANCE);
      expect(Number(books.quota)).toBeGreaterThanOrEqual(0);
    } finally {
      await database.close();
    }
  }, 180_000);
});

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
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedServer, readConsumeBooks, startEmbeddedServer } from './testing/embedded.ts';

/** $0.002 a call at 500000 units per USD. */
const PER_CALL = 1000;
/** Enough for 400 calls: the load runs the balance out after the restart. */
const START_BALANCE = 400 * PER_CALL;

describe('the embedded default killed under load', () => {
  let dataDir: string;
  let upstream: FakeOpenAi;
  let server: EmbeddedServer['server'];
  let payer: EmbeddedServer['payer'];
  let openDatabase: EmbeddedServer['openDatabase'];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'turnpike-embedded-crash-'));
    upstream = await startFakeOpenAi({});
    ({ server, payer, openDatabase } = await startEmbeddedServer({
      dataDir,
      upstreamUrl: upstream.url,
      model: 'crash-model',
      usdPerCall: 0.002,
      balance: START_BALANCE,
    }));
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
      const books = await readConsumeBooks(database, payer.userId, PER_CALL);
      const deducted = START_BALANCE - books.quota;
      const logged = new Set(books.requestIds);
      const figures = {
        answered: answered.length,
        answeredBeforeKill,
        inFlightAtKill,
        logs: books.logs,
        deducted,
        logged: books.logged,
        usedQuota: books.usedQuota,
      };
      // Every answered call is logged, once; a call cut by the kill may have been billed (the server settled it
      // before the client got its answer), nothing else.
      expect(
        answered.filter((id) => !logged.has(id)),
        JSON.stringify(figures),
      ).toEqual([]);
      expect(books.duplicates).toBe(0);
      expect(books.logs, JSON.stringify(figures)).toBeLessThanOrEqual(answered.length + inFlightAtKill);
      // The books agree with each other and with the price.
      expect(books.offPrice).toBe(0);
      expect(deducted, JSON.stringify(figures)).toBe(books.logged);
      expect(books.usedQuota).toBe(deducted);
      expect(books.requestCount).toBe(books.logs);
      // Served x price never exceeds the balance the payer had.
      expect(books.logs * PER_CALL).toBeLessThanOrEqual(START_BALANCE);
      expect(books.quota).toBeGreaterThanOrEqual(0);
    } finally {
      await database.close();
    }
  }, 180_000);
});

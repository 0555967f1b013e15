/**
 * Outages of the database and of Redis cost nothing (issue 25): no process exits, no paying user is refused, no
 * settled call goes unbilled or is billed twice, no balance is overdrawn. Proved on the cluster of the cluster
 * tests (one ROLE=api process, three ROLE=relay processes behind a round-robin, a Redis of the cluster's own) with
 * every process reaching Postgres through a TCP proxy the test controls: the database "goes away" by refusing
 * new connections and resetting the open ones, never by stopping the Postgres other tests share.
 *
 * 16 clients call a per-call-priced model ($1 a call), stream and not, through the round-robin while it happens.
 * Every process runs under a restart policy (started again 2 s after it exits, as Kubernetes would), so a crash
 * is counted instead of taking the cluster down for the next test. For each scenario the figures (answers by
 * status, calls served during the outage, exits, the books) go to test-results/cluster-figures.json.
 *
 * CLUSTER_LONG=1 (`make cluster-test`) adds the 60 s outages; CI runs the 20 s ones.
 */
import { createDb, type Database } from '@turnpike/core/db/client';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  type ClusterProcess,
  consoleApi,
  recordClusterFigures,
  signInAsRoot,
  startCluster,
} from './testing/cluster.ts';
import { createTestDatabaseUrl, ROOT } from './testing/test-app.ts';

const PRICE = 500_000; // $1 per call of `paid-model` (QuotaPerUnit 500000)
const MODEL = 'paid-model';
const CLIENTS = 16;
/** A balance no run comes near: a payer "whose balance covers the whole run". */
const RICH = 10_000_000 * PRICE;
/** A balance that runs out during the run: good for exactly this many calls. */
const SMALL_CALLS = 400;
/** The clients calling for the small payer, each pausing between calls so the balance lasts into the outage. */
const SMALL_CLIENTS = 4;
const SMALL_PAUSE_MS = 25;
/** Kubernetes restarts a container about this long after it exits (the first back-off). */
const RESTART_AFTER_MS = 2_000;
const LONG = process.env.CLUSTER_LONG === '1';
const enabled = Boolean(process.env.TEST_POSTGRES_URL) && hasRedisServer();
/** Written by the test to read the books; left alone by the simulated failover. */
const BOOKKEEPER = 'cluster-outage-books';

type Phase = 'before' | 'outage' | 'after';

/** What one payer's clients saw. */
interface Tally {
  /** Complete 200 answers (a stream up to `data: [DONE]`). */
  served: number;
  servedIn: Record<Phase, number>;
  /** `403 insufficient_user_quota` while what the payer had left covered the call. */
  wrongful403: number;
  /** `403 insufficient_user_quota` once the balance was spent (counting the calls in flight as spent). */
  rightful403: number;
  /** 503 or 429 with a Retry-After: the gateway says it is degraded and when to come back. */
  degraded: number;
  /** 5xx (a degraded 503 with Retry-After apart), the round-robin's 502 when no relay answered, or no answer. */
  fivexx: number;
  /** When each of those came (ms since the outage began, negative before it) and what it was, for a failing run. */
  fivexxSeen: string[];
  /** A stream that answered 200 and then broke off before `data: [DONE]`. */
  cut: number;
  /** Anything else: an answer no scenario expects. */
  other: number;
  /**
   * No answer, or a stream cut, from a call in flight when the test SIGKILLed a relay: what a killed pod costs
   * its open connections, not a failure of the gateway. Such a call may have been settled just before the kill.
   */
  inFlightAtKill: number;
  inFlight: number;
  /** Answers by status and error code, e.g. `403 insufficient_user_quota`, `0 fetch failed`. */
  statuses: Record<string, number>;
}

interface LoadPayer {
  readonly userId: number;
  readonly key: string;
  readonly start: number;
  /** Calls the balance covers; undefined: the whole run. */
  readonly covers: number | undefined;
  readonly clients: number;
  readonly pauseMs: number;
  readonly tally: Tally;
}

const newTally = (): Tally => ({
  served: 0,
  servedIn: { before: 0, outage: 0, after: 0 },
  wrongful403: 0,
  rightful403: 0,
  degraded: 0,
  fivexx: 0,
  fivexxSeen: [],
  cut: 0,
  other: 0,
  inFlightAtKill: 0,
  inFlight: 0,
  statuses: {},
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(read: () => Promise<T | undefined>, ms: number, every = 100): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) return undefined;
    await sleep(every);
  }
}

const isReady = (url: string) =>
  fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })
    .then((r) => r.status === 200)
    .catch(() => false);

describe.skipIf(!enabled)('a cluster under database and Redis outages', () => {
  let cluster: Cluster;
  let fake: FakeOpenAi;
  let database: Database;
  /** Raw reads of the books (the same database, not through the proxy). */
  let bookkeeper: pg.Pool;
  let databaseUrl: string;
  let dropDatabase: () => Promise<void>;
  let redis: Redis;
  let admin: Record<string, string>;
  const figures: Record<string, Record<string, unknown>> = {};
  /** Every scenario's payers, for the hourly counters checked once the relays have stopped. */
  const scenarioPayers: { scenario: string; payers: LoadPayer[] }[] = [];

  const processes = (): ClusterProcess[] => [cluster.api, ...cluster.relays];

  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  const payer = async (
    quota: number,
    covers: number | undefined,
    clients: number,
    pauseMs = 0,
  ): Promise<LoadPayer> => {
    const user = await createUserRepo(database.db).insert({
      username: `outage-${Math.random().toString(36).slice(2, 10)}`,
      password: 'not-a-real-hash',
      quota,
    });
    const token = await createTokenRepo(database.db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'outage',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    return {
      userId: user.id,
      key: `sk-${token.key}`,
      start: quota,
      covers,
      clients,
      pauseMs,
      tally: newTally(),
    };
  };

  /**
   * 16 clients calling until `stop()`: each answer is sorted into the payer's tally under the phase it arrived in.
   * A client pauses a little after a failure, as a client with a retry policy would (and so that relays that are
   * gone do not turn the load into a busy loop).
   */
  const startLoad = (payers: readonly LoadPayer[]) => {
    let stopped = false;
    const state: { phase: Phase; cutAt?: number } = { phase: 'before' };
    const one = async (p: LoadPayer, stream: boolean) => {
      const t = p.tally;
      const startedAt = Date.now();
      t.inFlight += 1;
      let status = 0;
      let body = '';
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${cluster.relayUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: MODEL,
            stream,
            messages: [{ role: 'user', content: 'hello outage' }],
          }),
          signal: AbortSignal.timeout(30_000),
        });
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        body = await response.text();
      } catch (error) {
        const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
        body = `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
        if (status === 200) status = -1; // the stream broke off
      } finally {
        t.inFlight -= 1;
      }
      const code =
        status >= 400
          ? (/"code"\s*:\s*"([^"]+)"/.exec(body)?.[1] ?? /"type"\s*:\s*"([^"]+)"/.exec(body)?.[1])
          : '';
      const label = `${status}${code ? ` ${code}` : status <= 0 ? ` ${body.slice(0, 40)}` : ''}`;
      t.statuses[label] = (t.statuses[label] ?? 0) + 1;
      if (status === 200 && (!stream || body.trimEnd().endsWith('data: [DONE]'))) {
        t.served += 1;
        t.servedIn[state.phase] += 1;
        return 'served';
      }
      const broken = status === 0 || status === -1 || (status === 200 && stream);
      if (broken && killedSince(startedAt)) t.inFlightAtKill += 1;
      else if (status === 200 || status === -1) t.cut += 1;
      else if (status === 403 && code === 'insufficient_user_quota') {
        if (p.covers !== undefined && t.served + t.inFlight + t.inFlightAtKill >= p.covers) {
          t.rightful403 += 1;
          return 'spent';
        }
        t.wrongful403 += 1;
      } else if ((status === 503 || status === 429) && retryAfter) t.degraded += 1;
      else if (status >= 500 || status === 0) {
        t.fivexx += 1;
        const since =
          state.cutAt === undefined ? 'before' : `${startedAt - state.cutAt}..${Date.now() - state.cutAt} ms`;
        t.fivexxSeen.push(`${since}: ${label}`);
      } else t.other += 1;
      return 'failed';
    };
    const clients = payers.flatMap((p) =>
      Array.from({ length: p.clients }, async (_, client) => {
        for (let i = 0; !stopped; i += 1) {
          const outcome = await one(p, (i + client) % 2 === 0);
          if (outcome === 'failed') await sleep(50);
          else if (p.pauseMs > 0) await sleep(p.pauseMs);
        }
      }),
    );
    return {
      state,
      async stop() {
        stopped = true;
        await Promise.all(clients);
      },
    };
  };

  /**
   * Whether a process the test SIGKILLed was still dying at `at` or later: from the signal until its exit was seen
   * (with 100 ms for this process's own lag). Until it has exited, a dying process's listening socket still takes
   * connections into its backlog and then resets them; on a loaded host that lasts longer than a moment.
   */
  const killedSince = (at: number) =>
    processes().some((p) =>
      p.signalsSent().some((s) => {
        if (s.signal !== 'SIGKILL') return false;
        const exit = p.exits().find((e) => e.asked && e.at >= s.at);
        return (exit?.at ?? Date.now()) >= at - 100;
      }),
    );

  /**
   * What the database says a payer paid: the balance drop, the logs, the counters and duplicate request ids, read in
   * one statement, so a flush committing meanwhile cannot make the balance and the logs disagree.
   */
  const books = async (p: LoadPayer) => {
    const { rows } = await bookkeeper.query<{
      quota: string;
      used_quota: string;
      request_count: string;
      logged: string;
      logs: string;
      duplicates: string;
    }>(
      `select u.quota, u.used_quota, u.request_count,
              (select coalesce(sum(quota), 0) from logs where user_id = u.id) as logged,
              (select count(*) from logs where user_id = u.id) as logs,
              (select count(*) from (select 1 from logs where user_id = u.id and request_id is not null
                                      group by request_id having count(*) > 1) d) as duplicates
         from users u where u.id = $1`,
      [p.userId],
    );
    const row = rows[0];
    const balance = Number(row?.quota ?? 0);
    return {
      balance,
      deducted: p.start - balance,
      logged: Number(row?.logged ?? 0),
      logs: Number(row?.logs ?? 0),
      usedQuota: Number(row?.used_quota ?? 0),
      requestCount: Number(row?.request_count ?? 0),
      duplicateRequestIds: Number(row?.duplicates ?? 0),
    };
  };

  /**
   * Settled calls not written yet anywhere in the cluster: in a relay's queue (journaled or spooled), or in the
   * journal of a dead relay no other relay has written yet. Undefined when a relay does not answer.
   */
  const unwritten = async (): Promise<number | undefined> => {
    const queued = await Promise.all(
      cluster.relays.map((relay) =>
        fetch(`${relay.url}/metrics`, { signal: AbortSignal.timeout(3_000) })
          .then(async (r) => {
            const line = /^turnpike_settlement_queue_records (\S+)$/m.exec(await r.text());
            return line ? Number(line[1]) : undefined;
          })
          .catch(() => undefined),
      ),
    );
    if (queued.some((n) => n === undefined)) return undefined;
    const orphans = await redis.scard(`${cluster.keyPrefix}{ledger}:orphans`).catch(() => undefined);
    if (orphans === undefined) return undefined;
    return queued.reduce((sum: number, n) => sum + (n ?? 0), 0) + orphans;
  };

  /**
   * The books once they have settled: at once when every served call is logged; else, for what never comes (a call
   * in flight at a kill that was not settled), once nothing is left to write in the cluster and the logs have stopped
   * growing (three reads 1.5 s apart). A backlog on a loaded host is waited for, not read half-written.
   */
  const settledBooks = async (p: LoadPayer) => {
    let previous = -1;
    let still = 0;
    const settled = await until(
      async () => {
        const now = await books(p);
        if (now.logs === p.tally.served + p.tally.inFlightAtKill) return now;
        still = now.logs === previous && (await unwritten()) === 0 ? still + 1 : 0;
        previous = now.logs;
        return still >= 2 ? now : undefined;
      },
      90_000,
      1_500,
    );
    return settled ?? books(p);
  };

  const outstanding = async (userId: number) =>
    Number((await redis.get(`${cluster.keyPrefix}{ledger}:out:u:${userId}`).catch(() => null)) ?? 0);

  /** Each relay's `/readyz` as `<status> <status field>`, e.g. `200 degraded`, or why there was no answer. */
  const readinessOfRelays = async () =>
    Object.fromEntries(
      await Promise.all(
        cluster.relays.map(async (relay) => {
          const answer = await fetch(`${relay.url}/readyz`, { signal: AbortSignal.timeout(3_000) })
            .then(async (r) => `${r.status} ${((await r.json()) as { status?: string }).status ?? ''}`)
            .catch((error: Error) => `no answer (${error.name})`);
          return [relay.name, answer] as const;
        }),
      ),
    );

  /** Waits until every process runs and is ready, and the database and Redis are there. */
  const healthy = async () => {
    await cluster.postgres?.restore();
    const ok = await until(
      async () => {
        const ready = await Promise.all(processes().map((p) => isReady(p.url)));
        return ready.every(Boolean) ? true : undefined;
      },
      90_000,
      200,
    );
    if (!ok)
      throw new Error(
        `the cluster did not recover:\n${processes()
          .map((p) => `${p.name}: ${p.output().slice(-1_500)}`)
          .join('\n')}`,
      );
  };

  const cutDatabase = async () => {
    await cluster.postgres?.refuse();
    cluster.postgres?.resetAll();
  };
  const restoreDatabase = async () => {
    await cluster.postgres?.restore();
  };

  interface Scenario {
    readonly name: string;
    readonly outageSeconds: number;
    /** The rich payer gets the clients the small payer does not. */
    readonly smallPayer: boolean;
    cut(): Promise<void>;
    heal(): Promise<void>;
    /** Runs as the outage starts, while the clock of the outage runs. */
    during?(): Promise<Record<string, unknown>>;
    /**
     * The overdraft, in calls, the design allows in this scenario (docs/adr/0022): 0 except while Redis is away,
     * where the relays together may admit the calls in flight on the account that a relay had not seen yet.
     */
    readonly overdraftCalls?: number;
  }

  /**
   * Load for a while, the outage, load until the cluster is back and a small payer's balance is spent, then the
   * books. The figures are recorded before anything is asserted, so a failing run still reports them.
   */
  const runScenario = async (s: Scenario) => {
    await healthy();
    const exitsBefore = new Map(processes().map((p) => [p.name, p.exits().length]));
    const restartsBefore = new Map(processes().map((p) => [p.name, p.restarts()]));
    const small = s.smallPayer
      ? await payer(SMALL_CALLS * PRICE, SMALL_CALLS, SMALL_CLIENTS, SMALL_PAUSE_MS)
      : undefined;
    const rich = await payer(RICH, undefined, CLIENTS - (small ? SMALL_CLIENTS : 0));
    const payers = small ? [rich, small] : [rich];
    scenarioPayers.push({ scenario: s.name, payers });

    const load = startLoad(payers);
    // Warm: calls flowing on every relay, and a quarter of the small balance spent before the outage.
    await until(
      async () =>
        rich.tally.served >= 300 && (!small || small.tally.served >= SMALL_CALLS / 4) ? true : undefined,
      20_000,
      20,
    );
    const cutAt = Date.now();
    load.state.phase = 'outage';
    load.state.cutAt = cutAt;
    await s.cut();
    const during = s.during?.() ?? Promise.resolve({});
    // A relay that was ready says `degraded` (200) through an outage: probed 1.5 s in, before any kill.
    const readiness =
      s.outageSeconds >= 10 ? sleep(1_500).then(readinessOfRelays) : Promise.resolve(undefined);
    await sleep(Math.max(0, s.outageSeconds * 1000 - (Date.now() - cutAt)));
    await s.heal();
    const healedAt = Date.now();
    load.state.phase = 'after';
    const duringFigures = await during;
    const readinessDuringOutage = await readiness;
    // After: until every process is ready again, calls flow, and the small balance is spent.
    const recovered = await until(
      async () => {
        if (rich.tally.servedIn.after < 200) return undefined;
        if (small && small.tally.served < SMALL_CALLS && small.tally.rightful403 === 0) return undefined;
        const ready = await Promise.all(processes().map((p) => isReady(p.url)));
        return ready.every(Boolean) ? Date.now() - healedAt : undefined;
      },
      60_000,
      100,
    );
    // A small payer's last word must come after the cluster is back: keep it calling a little longer.
    if (small) {
      const refused = small.tally.rightful403;
      await until(async () => (small.tally.rightful403 >= refused + 20 ? true : undefined), 10_000, 50);
    }
    await load.stop();

    const settled = await Promise.all(payers.map((p) => settledBooks(p)));
    const holdsReleased = await until(
      async () =>
        (await Promise.all(payers.map((p) => outstanding(p.userId)))).every((o) => o === 0)
          ? true
          : undefined,
      30_000,
      200,
    );
    const exits = Object.fromEntries(
      processes().map((p) => {
        const mine = p.exits().slice(exitsBefore.get(p.name));
        return [
          p.name,
          {
            crashes: mine.filter((e) => !e.asked).length,
            killedByTest: mine.filter((e) => e.asked).length,
            exitCodes: mine.map((e) => e.code ?? e.signal),
            restarts: p.restarts() - (restartsBefore.get(p.name) ?? 0),
          },
        ];
      }),
    );
    const crashes = Object.values(exits).reduce((n, e) => n + e.crashes, 0);
    const describePayer = (p: LoadPayer, b: Awaited<ReturnType<typeof books>>) => {
      const { inFlight: _, ...tally } = p.tally;
      return {
        balanceCovers: p.covers ?? 'the whole run',
        ...tally,
        ...b,
        servedTimesPrice: p.tally.served * PRICE,
        unbilledCalls: p.tally.served - b.deducted / PRICE,
        unloggedCalls: p.tally.served - b.logs,
        overdraftCalls: p.covers === undefined ? 0 : Math.max(0, p.tally.served - p.covers),
      };
    };
    figures[s.name] = {
      outageSeconds: s.outageSeconds,
      servedDuringOutage: payers.reduce((n, p) => n + p.tally.servedIn.outage, 0),
      recoveredMsAfterHeal: recovered ?? 'not within 60 s',
      processesAliveAtEnd: processes().filter((p) => p.child()).length,
      crashes,
      exits,
      holdsReleased: holdsReleased ?? false,
      ...duringFigures,
      ...(readinessDuringOutage ? { readinessDuringOutage } : {}),
      rich: describePayer(rich, settled[0] as Awaited<ReturnType<typeof books>>),
      ...(small ? { small: describePayer(small, settled[1] as Awaited<ReturnType<typeof books>>) } : {}),
    };
    recordClusterFigures({ outage: figures });

    // The acceptance: each as its own soft assertion, so a failing run names every broken promise at once.
    expect.soft(crashes, 'processes that exited on their own').toBe(0);
    expect
      .soft(
        processes().every((p) => p.child()),
        'every process alive at the end',
      )
      .toBe(true);
    expect.soft(recovered, 'every process ready again after the outage').toBeDefined();
    for (const [i, p] of payers.entries()) {
      const b = settled[i] as Awaited<ReturnType<typeof books>>;
      const who = p === rich ? 'rich payer' : 'small payer';
      expect.soft(p.tally.fivexx, `${who}: 5xx or no answer`).toBe(0);
      expect.soft(p.tally.wrongful403, `${who}: 403 insufficient_user_quota with money left`).toBe(0);
      expect.soft(p.tally.cut, `${who}: streams cut`).toBe(0);
      expect.soft(p.tally.other, `${who}: other answers`).toBe(0);
      // Exactly the calls served; a call in flight on a relay the test killed may have been settled first, so
      // it may be billed (once) too.
      const billed = b.deducted / PRICE;
      const atKill = p.tally.inFlightAtKill;
      expect.soft(billed, `${who}: balance drop ≥ served × price`).toBeGreaterThanOrEqual(p.tally.served);
      expect
        .soft(billed, `${who}: balance drop ≤ (served + in flight at a kill) × price`)
        .toBeLessThanOrEqual(p.tally.served + atKill);
      if (atKill === 0)
        expect.soft(b.deducted, `${who}: balance drop = served × price`).toBe(p.tally.served * PRICE);
      expect.soft(b.logged, `${who}: consume-log sum = balance drop`).toBe(b.deducted);
      expect.soft(b.logs * PRICE, `${who}: one consume log per billed call`).toBe(b.deducted);
      expect.soft(b.usedQuota, `${who}: used_quota growth = balance drop`).toBe(b.deducted);
      expect.soft(b.requestCount * PRICE, `${who}: request_count growth = billed calls`).toBe(b.deducted);
      expect.soft(b.duplicateRequestIds, `${who}: request ids logged twice`).toBe(0);
      if (p.covers !== undefined) {
        const allowed = s.overdraftCalls ?? 0;
        expect
          .soft(p.tally.served, `${who}: served within the balance (overdraft at most ${allowed} calls)`)
          .toBeLessThanOrEqual(p.covers + allowed);
        expect
          .soft(p.tally.served, `${who}: served until the balance was spent`)
          .toBeGreaterThanOrEqual(p.covers);
        // The balance shows exactly what was served (no clamp hides a debt here): 0 when no overdraft is allowed.
        expect
          .soft(b.balance, `${who}: balance = start − served × price`)
          .toBe(p.start - p.tally.served * PRICE);
        if (allowed === 0) expect.soft(b.deducted, `${who}: billed = the balance`).toBe(p.start);
      }
    }
    expect
      .soft(rich.tally.degraded, 'rich payer: degraded refusals to a payer whose balance covers the run')
      .toBe(0);
    expect.soft(holdsReleased, 'every hold released after the run').toBe(true);
    for (const [relay, answer] of Object.entries(readinessDuringOutage ?? {}))
      expect.soft(answer, `${relay}: /readyz 1.5 s into the outage`).toBe('200 degraded');
    return { rich, small };
  };

  const databaseOutage = (seconds: number): Scenario => ({
    name: `databaseOutage${seconds}s`,
    outageSeconds: seconds,
    smallPayer: false,
    cut: cutDatabase,
    heal: restoreDatabase,
  });

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    databaseUrl = created.url as string;
    dropDatabase = created.drop;
    fake = await startFakeOpenAi({});
    fake.setRecording(false);
    cluster = await startCluster({ databaseUrl, postgresProxy: true });
    const url = new URL(databaseUrl);
    url.searchParams.set('application_name', BOOKKEEPER);
    database = await createDb({ url: url.toString() });
    bookkeeper = new pg.Pool({ connectionString: url.toString(), max: 2 });
    bookkeeper.on('error', () => {});
    redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify({ [MODEL]: 1 }) });
    await api('PUT', '/api/option/', { key: 'DataExportEnabled', value: 'true' });
    await api('POST', '/api/channel/', {
      name: 'fake upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: fake.url,
      models: MODEL,
      group: 'default',
    });
    for (const p of processes()) p.restartAfterMs = RESTART_AFTER_MS;
  }, 180_000);

  afterAll(async () => {
    console.log(`outage figures\n${JSON.stringify(figures, null, 2)}`);
    if (Object.keys(figures).length > 0) recordClusterFigures({ outage: figures });
    redis?.disconnect();
    await bookkeeper?.end();
    await database?.close();
    await cluster?.close();
    await fake?.close();
    await dropDatabase?.();
  }, 60_000);

  it('rides through the database cut for 20 s under load: no exit, no refusal, every call billed once', async () => {
    await runScenario(databaseOutage(20));
  }, 180_000);

  it.runIf(LONG)(
    'rides through the database cut for 60 s under load',
    async () => {
      await runScenario(databaseOutage(60));
    },
    240_000,
  );

  it('loses nothing and overdraws nothing when relays are SIGKILLed during a database outage and restarted', async () => {
    // Two relays killed while the database is away, each started again 2 s later (while it is still away): a
    // relay started then must wait or serve from Redis, not crash; the charges the killed ones had not written
    // must still be written once, and the small balance not be served twice.
    const killed = [cluster.relays[1], cluster.relays[2]] as ClusterProcess[];
    await runScenario({
      name: 'relaysKilledDuringDatabaseOutage20s',
      outageSeconds: 20,
      smallPayer: true,
      cut: cutDatabase,
      heal: restoreDatabase,
      async during() {
        const began = Date.now();
        const readyAgainMs: Record<string, number | string> = {};
        const killedAtMs: Record<string, number> = {};
        const exitSeenAfterMs: Record<string, number> = {};
        await Promise.all(
          killed.map(async (relay, i) => {
            await sleep(2_000 + 3_000 * i);
            const killedAt = Date.now();
            killedAtMs[relay.name] = killedAt - began;
            await relay.signal('SIGKILL');
            exitSeenAfterMs[relay.name] = Date.now() - killedAt;
            // Started again by the restart policy; ready again (from Redis) before the database is back?
            const ready = await until(
              async () => ((await isReady(relay.url)) ? true : undefined),
              12_000,
              100,
            );
            readyAgainMs[relay.name] = ready ? Date.now() - killedAt : 'not during the outage';
          }),
        );
        return {
          killed: killed.map((r) => r.name),
          killedAtMs,
          exitSeenAfterMs,
          readyAgainAfterKillMs: readyAgainMs,
        };
      },
    });
    for (const relay of killed)
      expect.soft(relay.exits().filter((e) => !e.asked).length, `${relay.name}: crashes`).toBe(0);
  }, 240_000);

  it('rides through a failover (every backend of its database terminated mid-load) without a lost or double write', async () => {
    const terminate = async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ terminated: boolean }>(
          `select pg_terminate_backend(pid) as terminated from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and application_name <> $1`,
          [BOOKKEEPER],
        );
        return rows.filter((r) => r.terminated).length;
      } finally {
        await client.end();
      }
    };
    let terminated = 0;
    await runScenario({
      name: 'failover',
      outageSeconds: 3,
      smallPayer: false,
      async cut() {
        terminated = await terminate();
      },
      async heal() {},
      async during() {
        // A primary switch breaks the connections more than once while the new one settles.
        await sleep(1_000);
        const again = await terminate();
        return { backendsTerminated: terminated, terminatedAgainAfter1s: again };
      },
    });
  }, 180_000);

  const redisOutage = (seconds: number): Scenario => ({
    name: `redisOutage${seconds}sRestartedEmpty`,
    outageSeconds: seconds,
    smallPayer: true,
    // The small payer's clients each have at most one call in flight: at most that many admitted on one relay
    // after another relay's last view of the account.
    overdraftCalls: SMALL_CLIENTS,
    cut: () => cluster.redis.stop(),
    heal: () => cluster.redis.start(),
  });

  it('refuses no payer with money while Redis is down for 20 s, and overdraws no more than the calls in flight', async () => {
    await runScenario(redisOutage(20));
  }, 180_000);

  it.runIf(LONG)(
    'refuses no payer with money while Redis is down for 60 s',
    async () => {
      await runScenario(redisOutage(60));
    },
    240_000,
  );

  it('counts every served call in the hourly usage counters (quota_data)', async () => {
    // The counters are written on their own interval (DataExportInterval, minutes); a relay told to stop writes
    // what it holds. So the relays stop here, gracefully, and every scenario's counters must then add up.
    for (const p of processes()) p.restartAfterMs = undefined;
    await Promise.all(cluster.relays.map((r) => r.signal('SIGTERM')));
    const counted = async (userId: number) => {
      const { rows } = await bookkeeper.query<{ quota: string; count: string }>(
        `select coalesce(sum(quota), 0) as quota, coalesce(sum(count), 0) as count from quota_data
          where user_id = $1`,
        [userId],
      );
      return { quota: Number(rows[0]?.quota ?? 0), count: Number(rows[0]?.count ?? 0) };
    };
    const all = scenarioPayers.flatMap(({ scenario, payers }) => payers.map((p) => ({ scenario, p })));
    await until(
      async () => {
        const now = await Promise.all(all.map(({ p }) => counted(p.userId)));
        return now.every((c, i) => c.count >= (all[i]?.p.tally.served ?? 0)) ? true : undefined;
      },
      15_000,
      500,
    );
    for (const { scenario, p } of all) {
      const c = await counted(p.userId);
      const who = p.covers === undefined ? 'rich' : 'small';
      const entry = figures[scenario]?.[who] as Record<string, unknown> | undefined;
      if (entry) Object.assign(entry, { hourlyCountedCalls: c.count, hourlyCountedQuota: c.quota });
    }
    recordClusterFigures({ outage: figures });
    for (const { scenario, p } of all) {
      const c = await counted(p.userId);
      const b = await books(p);
      const who = `${scenario} (${p.covers === undefined ? 'rich' : 'small'} payer)`;
      // = served, give or take the calls in flight on a relay the test killed (see the scenario's money check).
      expect.soft(c.count, `${who}: calls in quota_data ≥ served`).toBeGreaterThanOrEqual(p.tally.served);
      expect
        .soft(c.count, `${who}: calls in quota_data ≤ served + in flight at a kill`)
        .toBeLessThanOrEqual(p.tally.served + p.tally.inFlightAtKill);
      expect.soft(c.quota, `${who}: quota in quota_data = balance drop`).toBe(b.deducted);
    }
  }, 120_000);
});

/**
 * The relay under test, in a process of its own (started by bench/run.ts with an IPC channel): the production
 * relay app (`buildRelayApp`) with token auth, billing and logging on, on a fresh embedded PGlite database in a
 * temporary directory, or on a fresh database created on the Postgres server of `TEST_POSTGRES_URL` (and dropped
 * afterwards). `DATABASE_URL` is deliberately not used: the bench rewrites price options and seeds rows, which
 * must never land in an installation's database. It seeds one user, one unlimited token, prices for the bench
 * model and one OpenAI channel pointing at the fake upstream, then listens on 127.0.0.1.
 *
 * `node bench/relay-main.ts <upstream url> [<slow upstream url>]`: with a second upstream (one that streams slowly),
 * model `gpt-4o` is routed to it (the stream capacity and inter-frame gap runs). `BENCH_ALL_IN_ONE=1` builds the
 * all-in-one process (the console API with the relay on the same port, as `ROLE=all` does) instead of the relay
 * alone.
 *
 * Messages from the parent: `rss` (RSS now, the peak RSS so far, and the JS heap after a full GC), `cpu` (CPU time used so far, and
 * the user part of it),
 * `profile-start` / `profile-stop` (V8 CPU profile of a window, written to a file), `check` (waits until the batching writer is idle, then compares
 * the user's quota with the logged charges), `stop`. Fastify's request log goes to stdout, which the parent
 * points at /dev/null or a file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '@turnpike/api';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { loadConfig, type ResolvedConfig } from '@turnpike/core/config';
import { logs, users } from '@turnpike/core/db/schema/index';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createAbilityRepo } from '@turnpike/core/repos/ability.repo';
import { createChannelRepo } from '@turnpike/core/repos/channel.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { releaseStartupMemory } from '@turnpike/core/runtime/release-memory';
import { createRuntime } from '@turnpike/core/runtime/runtime';
import { createTestDatabaseUrl } from '@turnpike/core/testing/test-runtime';
import { buildRelayApp, registerRelay } from '@turnpike/relay';
import { count, eq, sum } from 'drizzle-orm';

export const BENCH_MODEL = 'gpt-4o-mini';
/** The model routed to the slow upstream, when there is one (bench/run.ts asks for it by name). */
const BENCH_SLOW_MODEL = 'gpt-4o';
/** Enough for any run: a request costs well under 1000 units. */
const START_QUOTA = 1_000_000_000_000;

export type RelayChildMessage =
  | { type: 'ready'; port: number; token: string; database: string; role: 'relay' | 'all' }
  | {
      type: 'rss';
      rss: number;
      peak: number;
      heapAfterGc: number;
      /** After the GC too: the heap V8 holds (live or not), and memory outside it (Buffers, native). */
      heapTotal: number;
      external: number;
    }
  | { type: 'check'; logged: number; loggedQuota: number; quotaDrop: number }
  | { type: 'cpu'; micros: number; userMicros?: number }
  | { type: 'profiling' }
  | { type: 'profiled'; file: string }
  | { type: 'failed'; message: string };

export type RelayParentMessage =
  | { type: 'rss' }
  | { type: 'cpu' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'check'; expectedLogs: number }
  | { type: 'stop' };

const send = (message: RelayChildMessage) => process.send?.(message);
const upstreamUrl = process.argv[2];
const slowUpstreamUrl = process.argv[3];
if (!upstreamUrl) throw new Error('usage: relay-main.ts <upstream url> [<slow upstream url>]');
const allInOne = process.env.BENCH_ALL_IN_ONE === '1';

/** The most RSS this process has had (the kernel's high-water mark), or RSS now where there is no /proc. */
function peakRss(): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {}
  return process.memoryUsage().rss;
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-'));
// A database of its own on TEST_POSTGRES_URL's server, or nothing (PGlite).
const database = await createTestDatabaseUrl();
const databaseUrl = database.url;
const config = loadConfig({
  DATA_DIR: dataDir,
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  SESSION_SECRET: 'bench-session-secret-0123456789',
  CRYPTO_SECRET: 'bench-crypto-secret-0123456789',
  LOG_LEVEL: 'info',
}) as ResolvedConfig;
const runtime = await createRuntime(config);
const { db, options } = runtime.deps;

// BENCH_MODEL_RATIO=0 makes every call free, which skips the per-request balance write (a diagnosis aid).
const modelRatio = Number(process.env.BENCH_MODEL_RATIO ?? 0.075);
await options.set(
  'ModelRatio',
  JSON.stringify({ [BENCH_MODEL]: modelRatio, [BENCH_SLOW_MODEL]: modelRatio }),
);
await options.set('CompletionRatio', JSON.stringify({ [BENCH_MODEL]: 4, [BENCH_SLOW_MODEL]: 4 }));
const user = await createUserRepo(db).insert({
  username: `bench-${Date.now()}`,
  password: 'not-a-real-hash',
  quota: START_QUOTA,
});
const token = await createTokenRepo(db).insert({
  userId: user.id,
  key: generateTokenKey(),
  name: 'bench',
  remainQuota: 0,
  unlimitedQuota: true,
});
const box = createChannelKeyBox(config.cryptoSecret);
const channels = await createChannelRepo(db).insertMany([
  {
    type: 1,
    name: 'fake upstream',
    key: box.seal('sk-bench-upstream'),
    baseUrl: upstreamUrl,
    models: BENCH_MODEL,
    group: 'default',
  },
  ...(slowUpstreamUrl
    ? [
        {
          type: 1,
          name: 'slow fake upstream',
          key: box.seal('sk-bench-upstream'),
          baseUrl: slowUpstreamUrl,
          models: BENCH_SLOW_MODEL,
          group: 'default',
        },
      ]
    : []),
]);
await createAbilityRepo(db).rebuild(channels);

const logger = { level: config.logLevel };
// As server/src/main.ts composes ROLE=relay and ROLE=all.
const app = allInOne
  ? await buildApp(runtime.deps, { logger })
  : await buildRelayApp(runtime.deps, { logger });
if (allInOne) await registerRelay(app, runtime.deps);
await app.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('no port');

async function checkQuota(expectedLogs: number) {
  // The batching writer flushes every second; wait until every answered request has its log row.
  const deadline = Date.now() + 30_000;
  let logged = 0;
  let loggedQuota = 0;
  let previous = -1;
  for (;;) {
    const [row] = await db
      .select({ n: count(), quota: sum(logs.quota) })
      .from(logs)
      .where(eq(logs.userId, user.id));
    logged = row?.n ?? 0;
    loggedQuota = Number(row?.quota ?? 0);
    // Requests cut off when a timed run stopped are billed a little later: wait until the count holds still.
    if ((logged >= expectedLogs && logged === previous) || Date.now() > deadline) break;
    previous = logged;
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  const [now] = await db.select({ quota: users.quota }).from(users).where(eq(users.id, user.id));
  send({ type: 'check', logged, loggedQuota, quotaDrop: START_QUOTA - (now?.quota ?? START_QUOTA) });
}

// V8's CPU profiler (what `node --cpu-prof` uses), started and stopped around one measured run only, so the
// profile shows the relay under load rather than its boot or the minutes it waits while other targets run.
let profiler: Session | undefined;
async function startProfile() {
  profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
  await profiler.post('Profiler.start');
}
async function stopProfile(file: string) {
  if (!profiler) throw new Error('the profiler is not running');
  const { profile } = await profiler.post('Profiler.stop');
  profiler.disconnect();
  profiler = undefined;
  writeFileSync(file, JSON.stringify(profile));
}

async function stop() {
  await app.close();
  await runtime.close();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

process.on('message', (message: RelayParentMessage) => {
  const fail = (error: unknown) => send({ type: 'failed', message: String(error) });
  switch (message.type) {
    case 'rss': {
      // RSS as it is; then the live JS heap after a full collection (the parent starts us with --expose-gc),
      // which tells a leak from a heap that has simply not been collected yet.
      const { rss } = process.memoryUsage();
      (globalThis as { gc?: () => void }).gc?.();
      const after = process.memoryUsage();
      send({
        type: 'rss',
        rss,
        peak: peakRss(),
        heapAfterGc: after.heapUsed,
        heapTotal: after.heapTotal,
        external: after.external,
      });
      break;
    }
    case 'cpu': {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system, userMicros: user });
      break;
    }
    case 'profile-start':
      startProfile().then(() => send({ type: 'profiling' }), fail);
      break;
    case 'profile-stop':
      stopProfile(message.file).then(() => send({ type: 'profiled', file: message.file }), fail);
      break;
    case 'check':
      checkQuota(message.expectedLogs).catch(fail);
      break;
    case 'stop':
      stop().catch(fail);
      break;
  }
});
process.on('disconnect', () => {
  stop().catch(() => process.exit(1));
});

// As the server entry does before it serves (server/src/main.ts): what loading the modules freed goes back first.
releaseStartupMemory();

// The peak RSS reported from here on is the serving process's, not the boot's (PGlite's initdb and the migrations
// pass through several hundred MiB once): writing 5 to clear_refs resets the kernel's high-water mark.
try {
  writeFileSync('/proc/self/clear_refs', '5');
} catch {}

send({
  type: 'ready',
  port: address.port,
  token: `sk-${token.key}`,
  database: databaseUrl ? 'postgres' : 'pglite',
  role: allInOne ? 'all' : 'relay',
});

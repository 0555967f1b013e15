/**
 * The whole cost of a call (issue 40): the CPU that one non-stream chat call costs the gateway process, its
 * Postgres cluster (every process of it, ended backends included) and its redis-server, each read from
 * `/proc/<pid>/stat` (bench/proc-stat.ts) and divided by the calls served. `make bench-duel A=… B=…` measures two
 * builds (any commit, or a checkout) side by side on the same host; `make bench` measures this checkout alone
 * after its own figures.
 *
 * Each build is the all-in-one process (bench/cost-gateway.ts) on a Postgres cluster and a redis-server of its
 * own (bench/services.ts), so neither build's database work lands in the other's figures. Three paths: Postgres
 * and Redis, Postgres alone, and the embedded default (PGlite in the process, no Redis: the gateway's CPU is then
 * the whole cost). On each path both builds are started and set up, warmed up, then loaded by `wrk` in turns (A,
 * B, A, B, …), COST_ROUNDS (3) rounds of COST_SECONDS (8) each at COST_CONNECTIONS (32), so what else the host does
 * falls on both alike. A round's CPU is read from before the load until the three processes are idle again after
 * it (the writer's last flush is part of the calls it carries). Every answer must be a 2xx (wrk counts those
 * ≥ 400, and socket errors); a round with any other fails the run.
 *
 * `node bench/cost.ts <build> [<build>]`; a build is a directory with a checkout and its node_modules, or a commit
 * (bench/builds.ts). Settings: COST_ROUNDS (3), COST_SECONDS (8), COST_WARMUP (5 s runs per build and path until
 * COST_WARMUP_CALLS, 20,000, are served),
 * COST_CONNECTIONS (32), COST_THREADS (wrk's threads, 2), COST_PATHS (`redis,postgres,embedded`), COST_KEEP_BUILDS (1:
 * keep a commit's worktree for the next run), COST_IDLE_SECONDS (5: the idle window), COST_GATEWAY_LOG (a folder for the gateways' logs; default none).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Build, prepareBuild } from './builds.ts';
import { COST_CHAT_BODY, type Gateway, startGateway } from './cost-gateway.ts';
import { startFakeUpstream } from './fake-upstream.ts';
import { clockTicksPerSecond, processTreeTicks } from './proc-stat.ts';
import {
  missingServices,
  type PostgresCluster,
  type RedisServer,
  startPostgresCluster,
  startRedisServer,
} from './services.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const numberFromEnv = (name: string, fallback: number): number => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`${name} must be a number > 0`);
  return parsed;
};

type CostPath = 'redis' | 'postgres' | 'embedded';
const PATH_NAMES: Record<CostPath, string> = {
  redis: 'Postgres + Redis',
  postgres: 'Postgres only',
  embedded: 'embedded (PGlite)',
};

interface Round {
  /** CPU per call, µs. */
  readonly gateway: number;
  readonly postgres?: number;
  readonly redis?: number;
  readonly calls: number;
  readonly seconds: number;
  /** Answers of status 400 and above (wrk's count), and socket errors (connect, read, write, timeout). */
  readonly failedAnswers: number;
  readonly socketErrors: number;
}

/** One build on one path: its processes, and its rounds. */
interface Side {
  readonly build: Build;
  readonly gateway: Gateway;
  readonly postgres?: PostgresCluster;
  readonly redis?: RedisServer;
  readonly rounds: Round[];
  /** CPU while no call is served, ms per second: what the rounds' figures hold that is not per call. */
  idle?: Idle;
}

interface Idle {
  readonly gateway: number;
  readonly postgres?: number;
  readonly redis?: number;
}

/** The build's own services, started once and shared by its paths (a database of its own per path). */
interface Services {
  postgres?: PostgresCluster;
  redis?: RedisServer;
}

/** What `wrk` prints from its `done` hook: one line of JSON. */
interface WrkSummary {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
}

const wrkScript = (token: string) => `
wrk.method = "POST"
wrk.body = [[${COST_CHAT_BODY}]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${token}"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout))
end
`;

function runWrk(script: string, url: string, seconds: number): Promise<WrkSummary> {
  const threads = Math.round(numberFromEnv('COST_THREADS', 2));
  const connections = Math.round(numberFromEnv('COST_CONNECTIONS', 32));
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '10s'];
  const child = spawn('wrk', [...args, '-s', script, `${url}/v1/chat/completions`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => {
    output += data.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = output.split('\n').find((l) => l.startsWith('{"requests"'));
      if (code !== 0 || !line) reject(new Error(`wrk exited (${code}): ${output.slice(-400)}`));
      else resolve(JSON.parse(line) as WrkSummary);
    });
  });
}

/**
 * Loads a freshly started gateway until its code is compiled and its pools are full: runs of `seconds` until it has
 * served COST_WARMUP_CALLS (20,000) calls, at most six runs. On a busy host a few seconds are a few thousand calls,
 * after which the CPU per call was still falling from one round to the next; returns the calls served.
 */
async function warmUp(script: string, url: string, seconds: number): Promise<number> {
  const wanted = numberFromEnv('COST_WARMUP_CALLS', 20_000);
  let served = 0;
  for (let run = 0; run < 6 && served < wanted; run += 1)
    served += (await runWrk(script, url, seconds)).requests;
  return served;
}

/** CPU ticks so far of the gateway, its Postgres cluster and its redis-server. */
function ticksOf(side: Omit<Side, 'rounds'>) {
  return {
    gateway: processTreeTicks(side.gateway.pid),
    postgres: side.postgres ? processTreeTicks(side.postgres.pid) : 0,
    redis: side.redis ? processTreeTicks(side.redis.pid) : 0,
  };
}

/**
 * Waits until the three are idle again after a run (at most one tick in each of two 100 ms intervals, or 5 s): the
 * writer's last flush and what it asks of Postgres belong to the run's calls.
 */
async function settle(side: Omit<Side, 'rounds'>): Promise<void> {
  const sum = () => Object.values(ticksOf(side)).reduce((a, b) => a + b, 0);
  const deadline = Date.now() + 5000;
  let quiet = 0;
  let last = sum();
  while (quiet < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = sum();
    quiet = now - last <= 1 ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * What each side costs while it serves nothing, over COST_IDLE_SECONDS (5) after the warm-up, all sides at once:
 * timers, the writer's and the caches' periodic work, Postgres's background processes, Redis's cron. At a few
 * hundred calls a second on a busy host that alone is tens of µs per call.
 */
async function measureIdle(sides: Side[], hz: number): Promise<void> {
  for (const side of sides) await settle(side);
  const seconds = numberFromEnv('COST_IDLE_SECONDS', 5);
  const before = sides.map(ticksOf);
  const startedAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - startedAt) / 1000;
  const after = sides.map(ticksOf);
  for (const [i, side] of sides.entries()) {
    const rate = (key: keyof Idle) =>
      (((after[i]?.[key] ?? 0) - (before[i]?.[key] ?? 0)) / hz / elapsed) * 1000;
    side.idle = {
      gateway: rate('gateway'),
      ...(side.postgres ? { postgres: rate('postgres') } : {}),
      ...(side.redis ? { redis: rate('redis') } : {}),
    };
  }
}

async function measureRound(side: Side, script: string, seconds: number, hz: number): Promise<Round> {
  const before = ticksOf(side);
  const wrk = await runWrk(script, side.gateway.url, seconds);
  await settle(side);
  const after = ticksOf(side);
  const perCall = (key: keyof typeof before) =>
    ((after[key] - before[key]) / hz / Math.max(1, wrk.requests)) * 1e6;
  return {
    gateway: perCall('gateway'),
    ...(side.postgres ? { postgres: perCall('postgres') } : {}),
    ...(side.redis ? { redis: perCall('redis') } : {}),
    calls: wrk.requests,
    seconds: wrk.duration_us / 1e6,
    failedAnswers: wrk.status,
    socketErrors: wrk.connect + wrk.read + wrk.write + wrk.timeout,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const range = (values: number[], unit = '') => {
  if (values.length === 0) return '—';
  const [low, high] = [fmt(Math.min(...values)), fmt(Math.max(...values))];
  return `${low === high ? low : `${low}-${high}`}${unit}`;
};

/** The issue's table: per call, each build on each path, the range over the rounds. */
interface Column {
  readonly title: string;
  readonly path: CostPath;
  readonly rounds: Round[];
  readonly idle?: Idle | undefined;
}

function costTable(columns: Column[], seconds: number): string {
  const row = (name: string, cell: (rounds: Round[], column: Column) => string) =>
    `| ${name} | ${columns.map((c) => cell(c.rounds, c)).join(' | ')} |`;
  const idle = (_: Round[], { idle }: Column) =>
    idle
      ? [idle.gateway, idle.postgres, idle.redis]
          .map((v) => (v === undefined ? '—' : v.toFixed(1)))
          .join(' / ')
      : '—';
  const pick = (key: 'gateway' | 'postgres' | 'redis') => (rounds: Round[]) =>
    range(
      rounds.flatMap((r) => (r[key] === undefined ? [] : [r[key]])),
      ' µs',
    );
  return [
    `| per call | ${columns.map((c) => c.title).join(' | ')} |`,
    `|---|${columns.map(() => '---|').join('')}`,
    row('gateway process CPU', pick('gateway')),
    row('Postgres CPU', pick('postgres')),
    row('Redis CPU', pick('redis')),
    row(`calls served in ${seconds} s`, (rounds) => range(rounds.map((r) => r.calls))),
    row(
      'answers ≥ 400 / socket errors',
      (rounds) =>
        `${rounds.reduce((n, r) => n + r.failedAnswers, 0)} / ${rounds.reduce((n, r) => n + r.socketErrors, 0)}`,
    ),
    row('idle: ms of CPU per s (gateway / Postgres / Redis)', idle),
  ].join('\n');
}

const sumOf = (values: number[]) => values.reduce((a, b) => a + b, 0);
/** The whole cost per call over every round of a side (all CPU over all calls), µs. */
const pooled = (rounds: Round[]) => {
  const calls = sumOf(rounds.map((r) => r.calls));
  const total = (key: 'gateway' | 'postgres' | 'redis') =>
    sumOf(rounds.map((r) => (r[key] ?? 0) * r.calls)) / calls;
  return { gateway: total('gateway'), postgres: total('postgres'), redis: total('redis') };
};

async function startServices(paths: CostPath[]): Promise<Services> {
  const needsPostgres = paths.includes('redis') || paths.includes('postgres');
  return {
    ...(needsPostgres ? { postgres: await startPostgresCluster() } : {}),
    ...(paths.includes('redis') ? { redis: await startRedisServer() } : {}),
  };
}

async function stopServices(services: Services): Promise<void> {
  services.postgres?.stop();
  await services.redis?.stop();
}

/** Which paths this host can run: Postgres and Redis need their servers, every path needs wrk. */
function runnablePaths(wanted: CostPath[]): { paths: CostPath[]; skipped: string[] } {
  const missing = missingServices();
  const skipped: string[] = [];
  const paths = wanted.filter((p) => {
    const why =
      p === 'embedded' ? undefined : (missing.postgres ?? (p === 'redis' ? missing.redis : undefined));
    if (why) skipped.push(`${PATH_NAMES[p]}: ${why}`);
    return !why;
  });
  return { paths, skipped };
}

const wrkMissing = (): boolean => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return false;
  } catch (error) {
    // wrk --version prints its version and exits 1: only a missing binary is ENOENT.
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
};

/** Measures each build on each path and prints the table. Builds are directories or commits (bench/builds.ts). */
export async function measureWholeCost(specs: readonly string[]): Promise<void> {
  const rounds = Math.round(numberFromEnv('COST_ROUNDS', 3));
  const seconds = Math.round(numberFromEnv('COST_SECONDS', 8));
  const warmup = Math.round(numberFromEnv('COST_WARMUP', 5));
  const wanted = (process.env.COST_PATHS ?? 'redis,postgres,embedded').split(',') as CostPath[];
  for (const p of wanted) if (!(p in PATH_NAMES)) throw new Error(`unknown path ${p} in COST_PATHS`);
  if (wrkMissing()) {
    process.stdout.write(
      'whole cost of a call: skipped, wrk is not installed (Debian: apt-get install wrk)\n',
    );
    return;
  }
  const { paths, skipped } = runnablePaths(wanted);
  for (const line of skipped) process.stdout.write(`whole cost of a call, skipped ${line}\n`);
  const hz = clockTicksPerSecond();
  const builds = specs.map((spec) => prepareBuild(spec, root));
  const upstream = await startFakeUpstream(root);
  const services: Services[] = [];
  const scripts = mkdtempSync(path.join(os.tmpdir(), 'turnpike-cost-wrk-'));
  const columns: Column[] = [];
  const open: Gateway[] = [];
  const cleanUp = async () => {
    await Promise.all(open.splice(0).map((g) => g.stop()));
    for (const s of services.splice(0)) await stopServices(s);
    upstream.child.kill('SIGTERM');
    rmSync(scripts, { recursive: true, force: true });
    for (const build of builds) build.release();
  };
  const onSignal = () => {
    cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  try {
    while (services.length < builds.length) services.push(await startServices(paths));
    const names = builds.map((b, i) => (builds.length > 1 ? `${'AB'[i]} (${b.label})` : b.label));
    process.stdout.write(
      `\nwhole cost of a call: ${names.join(' vs ')}; non-stream chat, wrk c=${numberFromEnv('COST_CONNECTIONS', 32)}, ` +
        `${rounds} rounds of ${seconds} s in turns; CPU from /proc at ${hz} ticks/s; load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}\n`,
    );
    for (const costPath of paths) {
      const sides: Side[] = [];
      for (const [i, build] of builds.entries()) {
        const own = services[i] as Services;
        const databaseUrl =
          costPath === 'embedded' ? undefined : own.postgres?.createDatabase(`bench_${costPath}`);
        const redis = costPath === 'redis' ? own.redis : undefined;
        const gateway = await startGateway(
          build,
          { ...(databaseUrl ? { databaseUrl } : {}), ...(redis ? { redisUrl: redis.url } : {}) },
          upstream.url,
        );
        open.push(gateway);
        sides.push({
          build,
          gateway,
          ...(databaseUrl && own.postgres ? { postgres: own.postgres } : {}),
          ...(redis ? { redis } : {}),
          rounds: [],
        });
      }
      const script = (side: Side) => {
        const file = path.join(scripts, `${side.gateway.pid}.lua`);
        writeFileSync(file, wrkScript(side.gateway.token));
        return file;
      };
      const files = sides.map(script);
      for (const [i, side] of sides.entries()) {
        const served = await warmUp(files[i] as string, side.gateway.url, warmup);
        process.stdout.write(`  ${PATH_NAMES[costPath]}, ${names[i]}: warmed up with ${fmt(served)} calls\n`);
      }
      await measureIdle(sides, hz);
      for (let round = 1; round <= rounds; round += 1)
        for (const [i, side] of sides.entries()) {
          const measured = await measureRound(side, files[i] as string, seconds, hz);
          side.rounds.push(measured);
          process.stdout.write(
            `  ${PATH_NAMES[costPath]}, round ${round}, ${names[i]}: gateway ${measured.gateway.toFixed(0)} µs` +
              (measured.postgres === undefined ? '' : `, Postgres ${measured.postgres.toFixed(0)} µs`) +
              (measured.redis === undefined ? '' : `, Redis ${measured.redis.toFixed(0)} µs`) +
              ` per call; ${fmt(measured.calls)} calls in ${measured.seconds.toFixed(1)} s` +
              (measured.failedAnswers + measured.socketErrors > 0
                ? `; ${measured.failedAnswers} answers ≥ 400, ${measured.socketErrors} socket errors`
                : '') +
              '\n',
          );
        }
      await Promise.all(sides.map((s) => s.gateway.stop()));
      open.splice(0);
      for (const [i, side] of sides.entries())
        columns.push({
          title: `${names[i]}, ${PATH_NAMES[costPath]}`,
          path: costPath,
          rounds: side.rounds,
          idle: side.idle,
        });
    }
  } finally {
    process.off('SIGINT', onSignal);
    await cleanUp();
  }

  const lines = [costTable(columns, seconds)];
  lines.push('', 'pooled over the rounds (all CPU / all calls), gateway + Postgres + Redis:');
  for (const column of columns) {
    const p = pooled(column.rounds);
    lines.push(
      `  ${column.title}: ${p.gateway.toFixed(0)} + ${p.postgres.toFixed(0)} + ${p.redis.toFixed(0)} = ${(p.gateway + p.postgres + p.redis).toFixed(0)} µs`,
    );
  }
  if (builds.length === 2)
    for (const costPath of paths) {
      const [a, b] = columns.filter((c) => c.path === costPath).map((c) => pooled(c.rounds));
      if (!a || !b) continue;
      const ratio = (x: number, y: number) => (x > 0 ? (y / x).toFixed(2) : '—');
      lines.push(
        `  B/A, ${PATH_NAMES[costPath]}: gateway ${ratio(a.gateway, b.gateway)}, Postgres ${ratio(a.postgres, b.postgres)}, ` +
          `Redis ${ratio(a.redis, b.redis)}, whole ${ratio(a.gateway + a.postgres + a.redis, b.gateway + b.postgres + b.redis)}`,
      );
    }
  const failed = columns.some((c) => c.rounds.some((r) => r.failedAnswers + r.socketErrors > 0));
  if (failed) lines.push('FAIL: some answers were not 2xx or some sockets failed (must be 0)');
  process.stdout.write(`\n${lines.join('\n')}\n`);
  if (failed) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const specs = process.argv.slice(2);
  if (specs.length < 1 || specs.length > 2) {
    process.stderr.write('usage: node bench/cost.ts <build> [<build>] (a checkout directory or a commit)\n');
    process.exit(2);
  }
  await measureWholeCost(specs);
}

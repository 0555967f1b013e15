/**
 * `make bench`: throughput and latency of the relay beside the upstream itself and a minimal passthrough proxy,
 * all on loopback. See bench/README.md for what is measured and why it is set up this way.
 *
 * Settings (environment): BENCH_DURATION (s per measurement, 8), BENCH_ROUNDS (turns it is split into, 4),
 * BENCH_WARMUP (s before each, 2),
 * BENCH_CONNECTIONS (`1,32,256`), BENCH_RSS_REQUESTS (100000; 0 skips the RSS run), TEST_POSTGRES_URL (a Postgres
 * server where a `ROLE=relay` gateway gets a database of its own, measured beside the embedded all-in-one process;
 * without it only the embedded one), BENCH_GATEWAYS (`relay,embedded`: which of the two), BENCH_STREAMS (2000
 * concurrent streams from a slow upstream; 0 skips), BENCH_TTFT_STREAMS (300 streams one at a time for the time to
 * first token), BENCH_SOAK (1: a soak of BENCH_SOAK_MINUTES, 10, of mixed traffic after everything else), BENCH_LOGS
 * (a number of consume logs: measures the console's log views over that many rows instead, bench/console-logs.ts),
 * BENCH_PRODUCTION (0: start every process without the production V8 and allocator settings, to compare),
 * BENCH_RELAY_LOG (file for the relay's
 * request log; default /dev/null), BENCH_CPU_PROF (1: take a V8 CPU profile of the relay during each of its
 * measured runs and its stream capacity run, and print where the time goes), BENCH_PERF (1: on-CPU perf profiles
 * of the baseline and the gateways, as µs per call of each step side by side; bench/perf-phases.ts), BENCH_SLOW_CALLS
 * (1: what the slowest 1 % of the gateways' calls at c=1 overlapped: a database query, a GC pause, or neither;
 * bench/slow-calls.ts), BENCH_COST (0: leaves out the whole cost of a call at the end, bench/cost.ts, which has
 * settings of its own).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { measureWholeCost } from './cost.ts';
import { summariseCpuProfile } from './cpu-profile.ts';
import { startFakeUpstream } from './fake-upstream.ts';
import { type PerfRecording, perfAvailable, perfNodeFlags, phasesTable, recordPerf } from './perf-phases.ts';
import type { RelayChildMessage, RelayParentMessage } from './relay-main.ts';
import { slowCallsNodeFlags, slowCallsTable, type Window } from './slow-calls.ts';
import { probeStreams, type StreamStats } from './stream-probe.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

const numberFromEnv = (name: string, fallback: number): number => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`${name} must be a number ≥ 0`);
  return parsed;
};

const DURATION_S = numberFromEnv('BENCH_DURATION', 8);
const ROUNDS = Math.max(1, Math.round(numberFromEnv('BENCH_ROUNDS', 4)));
const WARMUP_S = numberFromEnv('BENCH_WARMUP', 2);
const RSS_REQUESTS = numberFromEnv('BENCH_RSS_REQUESTS', 100_000);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,32,256').split(',').map(Number);
const STREAMS = Math.round(numberFromEnv('BENCH_STREAMS', 2000));
const TTFT_STREAMS = Math.round(numberFromEnv('BENCH_TTFT_STREAMS', 300));
const SOAK_MINUTES = process.env.BENCH_SOAK === '1' ? numberFromEnv('BENCH_SOAK_MINUTES', 10) : 0;
/** The slow upstream of the stream capacity run: streams held open a second before content, then a frame every 20 ms. */
const SLOW_FIRST_TOKEN_MS = 1000;
const SLOW_CHUNK_MS = 20;
/** The fake upstream's reply is ten words, one content frame each. */
const CONTENT_FRAMES = 10;
/**
 * The soak's long streams: each asks the slow upstream for this many content frames (the fake's `fake_stream`),
 * one every SLOW_CHUNK_MS, so a stream lasts about 25 s, most of a soak cycle, and carries ~300 KB (past what the
 * chat reader keeps unread); SOAK_STREAMS of them at once in each cycle.
 */
const SOAK_STREAM_FRAMES = 1200;
const SOAK_STREAMS = 200;
/**
 * How every Turnpike process is started in production (Dockerfile, chart, make run): V8's young generation capped
 * and glibc returning large freed blocks (bench/README.md "Memory"). The bench measures what is deployed.
 */
const PRODUCTION_NODE_FLAGS = process.env.BENCH_PRODUCTION === '0' ? [] : ['--max-semi-space-size=16'];
const PRODUCTION_ENV: Record<string, string> =
  process.env.BENCH_PRODUCTION === '0' ? {} : { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' };
const CPU_PROFILE = process.env.BENCH_CPU_PROF === '1';
/** On-CPU profiles (perf) of the baseline and the gateways, split into a call's steps (bench/perf-phases.ts). */
const PERF = process.env.BENCH_PERF === '1';
/** What the slowest calls at c=1 overlapped: a database query, a GC pause, neither (bench/slow-calls.ts). */
const SLOW_CALLS = process.env.BENCH_SLOW_CALLS === '1';
const MODES = (process.env.BENCH_MODES ?? 'non-stream,stream,converted,converted-stream').split(',');
const MODEL = 'gpt-4o-mini';

/** Issue 28's targets. */
const TARGETS = {
  ratioAtC32: 0.75,
  addedP50AtC1Ms: 0.2,
  addedP99AtC1Ms: 1,
  /** The converted path (an Anthropic client on an OpenAI upstream): added p99 at c=1. */
  convertedAddedP99AtC1Ms: 1.5,
  addedTtftP99Ms: 1,
  maxGapMs: 50,
  idleRssMiB: { relay: 150, embedded: 300 },
  streamsRssMiB: 600,
  rssGrowth: 0.1,
  soakGrowth: 0.05,
} as const;

/**
 * `non-stream` and `stream`: OpenAI chat on every target (the relay's same-format path). `converted` and
 * `converted-stream`: the relay is called as Anthropic's `/v1/messages` and converts to the same OpenAI upstream,
 * which the upstream and baseline targets are called with directly.
 */
type Mode = 'non-stream' | 'stream' | 'converted' | 'converted-stream';
const ALL_MODES: readonly Mode[] = ['non-stream', 'stream', 'converted', 'converted-stream'];
const isConverted = (mode: Mode) => mode === 'converted' || mode === 'converted-stream';
const isStreamMode = (mode: Mode) => mode === 'stream' || mode === 'converted-stream';
/** `relay`: `ROLE=relay` on Postgres; `embedded`: the all-in-one process (console API and relay) on PGlite. */
type Gateway = 'relay' | 'embedded';
type Target = 'upstream' | 'baseline' | Gateway;
const isGateway = (target: Target): target is Gateway => target === 'relay' || target === 'embedded';

const chatBodies = {
  'non-stream': JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] }),
  // Usage is asked for on every target, as the relay always asks its upstream for it.
  stream: JSON.stringify({
    model: MODEL,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Say hello.' }],
  }),
};
const messagesBody = (stream: boolean) =>
  JSON.stringify({
    model: MODEL,
    max_tokens: 256,
    ...(stream ? { stream: true } : {}),
    messages: [{ role: 'user', content: 'Say hello.' }],
  });

/** The path and body a target is sent in a mode. */
function requestOf(target: Target, mode: Mode): { path: string; body: string } {
  if (isGateway(target) && isConverted(mode))
    return { path: '/v1/messages', body: messagesBody(mode === 'converted-stream') };
  return { path: '/v1/chat/completions', body: chatBodies[isStreamMode(mode) ? 'stream' : 'non-stream'] };
}

// ---- processes ----------------------------------------------------------------------------------------------

const children: ChildProcess[] = [];

async function startUpstream(args: string[] = []): Promise<string> {
  const { child, url } = await startFakeUpstream(root, args);
  children.push(child);
  return url;
}

function forkChild<T extends { type: string }>(
  script: string,
  args: string[],
  options: { stdout?: number; execArgv?: string[]; env?: NodeJS.ProcessEnv } = {},
): { child: ChildProcess; ready: Promise<T> } {
  const child = fork(path.join(here, script), args, {
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit', 'ipc'],
    execArgv: options.execArgv ?? [],
    env: options.env ?? process.env,
  });
  children.push(child);
  const ready = new Promise<T>((resolve, reject) => {
    const onMessage = (message: T) => {
      if (message.type !== 'ready') return;
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
  return { child, ready };
}

/** Sends a message to the relay (or, for `cpu`, the baseline) process and waits for its answer of the given type. */
function ask<K extends RelayChildMessage['type']>(
  child: ChildProcess,
  message: RelayParentMessage,
  answer: K,
): Promise<Extract<RelayChildMessage, { type: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: RelayChildMessage) => {
      if (reply.type === 'failed') {
        child.off('message', onMessage);
        reject(new Error(reply.message));
      } else if (reply.type === answer) {
        child.off('message', onMessage);
        resolve(reply as Extract<RelayChildMessage, { type: K }>);
      }
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.send({ type: 'stop' });
    else child.kill('SIGTERM');
  });
}

// ---- load ---------------------------------------------------------------------------------------------------

interface Measured {
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
  readonly ok: number;
  /** Every response time, sorted. */
  readonly latencies: Float64Array;
}

const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);

async function load(
  target: Target,
  base: string,
  headers: Record<string, string>,
  mode: Mode,
  connections: number,
  run: { durationS?: number; amount?: number; keepLatencies?: boolean },
): Promise<Measured> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const keep = run.keepLatencies !== false;
  const { path: urlPath, body } = requestOf(target, mode);
  const instance = autocannon({
    url: `${base}${urlPath}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections,
    pipelining: 1,
    timeout: 30,
    ...(run.amount !== undefined ? { amount: run.amount } : { duration: run.durationS ?? DURATION_S }),
  });
  const started = performance.now();
  instance.on('response', (_client, _status, _bytes, ms) => {
    if (!keep) return;
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count] = ms;
    count += 1;
  });
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.subarray(0, count).sort();
  const done = result['2xx'] + result.non2xx;
  return {
    requests: done,
    seconds,
    rps: done / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    failed: result.errors + result.timeouts + result.non2xx,
    ok: result['2xx'],
    latencies: sorted,
  };
}

/** The rounds of one target as one measurement: counts and times added, latencies pooled. */
function combine(rounds: Measured[]): Measured {
  const requests = rounds.reduce((sum, run) => sum + run.requests, 0);
  const seconds = rounds.reduce((sum, run) => sum + run.seconds, 0);
  const latencies = new Float64Array(rounds.reduce((sum, run) => sum + run.latencies.length, 0));
  let at = 0;
  for (const run of rounds) {
    latencies.set(run.latencies, at);
    at += run.latencies.length;
  }
  latencies.sort();
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failed: rounds.reduce((sum, run) => sum + run.failed, 0),
    ok: rounds.reduce((sum, run) => sum + run.ok, 0),
    latencies,
  };
}

/** One request through each target, checking the answer is a real completion (and billed, for the relay). */
async function checkAnswer(target: Target, base: string, headers: Record<string, string>, mode: Mode) {
  const { path: urlPath, body } = requestOf(target, mode);
  const response = await fetch(`${base}${urlPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  const anthropic = isGateway(target) && isConverted(mode);
  const isComplete =
    response.status === 200 &&
    (anthropic
      ? mode === 'converted-stream'
        ? text.includes('event: message_stop') && text.includes('"output_tokens":')
        : (JSON.parse(text) as { type?: string }).type === 'message'
      : isStreamMode(mode)
        ? text.includes('data: [DONE]') && text.includes('"usage":{')
        : (JSON.parse(text) as { choices?: unknown[] }).choices?.length === 1);
  // An Anthropic stream carries no quota comment; the ledger check at the end covers it.
  const isBilled =
    !isGateway(target) ||
    mode === 'converted-stream' ||
    (mode === 'stream'
      ? /: x-turnpike-quota: \d+/.test(text)
      : /^\d+$/.test(response.headers.get('x-turnpike-quota') ?? ''));
  if (!isComplete || !isBilled)
    throw new Error(`${target} ${mode}: unexpected answer ${response.status} ${text.slice(0, 300)}`);
}

// ---- report -------------------------------------------------------------------------------------------------

const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(3));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const mib = (bytes: number) => bytes / 1024 / 1024;
const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

// ---- main ---------------------------------------------------------------------------------------------------

interface GatewayProcess {
  readonly name: Gateway;
  readonly child: ChildProcess;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly database: string;
  /** Answers it gave, and requests a timed run cut off (which it may still have served and billed). */
  answered: number;
  cut: number;
}

type Memory = Extract<RelayChildMessage, { type: 'rss' }>;

const streamBody = (model: string, frames?: number) =>
  JSON.stringify({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Say hello.' }],
    ...(frames === undefined ? {} : { fake_stream: { chunks: frames, interval_ms: SLOW_CHUNK_MS } }),
  });

/** A prompt of about 200,000 tokens (" hello" is one token in both encodings). */
const HUGE_PROMPT_BODY = JSON.stringify({
  model: MODEL,
  messages: [{ role: 'user', content: ' hello'.repeat(200_000) }],
});

async function main() {
  // BENCH_LOGS: the console's log views at scale instead (bench/console-logs.ts), which exits when done.
  if (process.env.BENCH_LOGS) await import('./console-logs.ts');
  const startedAt = performance.now();
  const [upstreamUrl, slowUpstreamUrl] = await Promise.all([
    startUpstream(),
    startUpstream([
      '--first-token-delay-ms',
      String(SLOW_FIRST_TOKEN_MS),
      '--chunk-delay-ms',
      String(SLOW_CHUNK_MS),
    ]),
  ]);
  const profileDir = CPU_PROFILE ? mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-prof-')) : undefined;
  if (PERF && !perfAvailable())
    throw new Error('BENCH_PERF=1 needs `perf` (Debian: linux-perf) and perf_event_paranoid <= 2 (or root)');
  const perfDir = PERF ? mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-perf-')) : undefined;
  const serverNodeFlags = perfDir
    ? [...PRODUCTION_NODE_FLAGS, ...perfNodeFlags(perfDir)]
    : PRODUCTION_NODE_FLAGS;
  const slowCallsDir = SLOW_CALLS
    ? mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-slow-calls-'))
    : undefined;
  const slowCallsEnv = (name: string): Record<string, string> =>
    slowCallsDir ? { BENCH_SLOW_CALLS_FILE: path.join(slowCallsDir, `${name}.json`) } : {};
  const relayLog = openSync(process.env.BENCH_RELAY_LOG ?? '/dev/null', 'a');
  const wanted = (process.env.BENCH_GATEWAYS ?? 'relay,embedded').split(',');
  const gatewayNames = (['relay', 'embedded'] as const).filter(
    (name) => wanted.includes(name) && (name === 'embedded' || Boolean(process.env.TEST_POSTGRES_URL)),
  );
  if (gatewayNames.length === 0)
    throw new Error('no gateway to measure: BENCH_GATEWAYS=relay needs TEST_POSTGRES_URL');
  const { TEST_POSTGRES_URL: _postgres, ...withoutPostgres } = process.env;
  const baseline = forkChild<{ type: 'ready'; port: number }>('baseline-main.ts', [upstreamUrl], {
    execArgv: serverNodeFlags,
    env: { ...process.env, ...PRODUCTION_ENV },
  });
  // The capacity run's baseline: the same proxy in front of the slow upstream, so the 2,000 streams' gaps and first
  // tokens of a bare proxy are read beside the gateways'.
  const slowBaseline =
    STREAMS > 0
      ? forkChild<{ type: 'ready'; port: number }>('baseline-main.ts', [slowUpstreamUrl], {
          execArgv: PRODUCTION_NODE_FLAGS,
          env: { ...process.env, ...PRODUCTION_ENV },
        })
      : undefined;
  const forks = gatewayNames.map((name) => ({
    name,
    ...forkChild<Extract<RelayChildMessage, { type: 'ready' }>>(
      'relay-main.ts',
      [upstreamUrl, slowUpstreamUrl],
      {
        stdout: relayLog,
        execArgv: ['--expose-gc', ...(slowCallsDir ? slowCallsNodeFlags() : []), ...serverNodeFlags],
        env:
          name === 'relay'
            ? { ...process.env, ...PRODUCTION_ENV, ...slowCallsEnv(name) }
            : { ...withoutPostgres, ...PRODUCTION_ENV, BENCH_ALL_IN_ONE: '1', ...slowCallsEnv(name) },
      },
    ),
  }));
  const baselineReady = await baseline.ready;
  const slowBaselineUrl = slowBaseline ? `http://127.0.0.1:${(await slowBaseline.ready).port}` : undefined;
  const gateways: GatewayProcess[] = [];
  for (const fork of forks) {
    const ready = await fork.ready;
    gateways.push({
      name: fork.name,
      child: fork.child,
      url: `http://127.0.0.1:${ready.port}`,
      headers: { authorization: `Bearer ${ready.token}` },
      database: `${ready.role === 'all' ? 'all-in-one' : 'ROLE=relay'} on ${ready.database}`,
      answered: 0,
      cut: 0,
    });
  }
  const gatewayOf = (name: Gateway) => gateways.find((g) => g.name === name) as GatewayProcess;
  const memoryOf = (gateway: GatewayProcess) => ask(gateway.child, { type: 'rss' }, 'rss');

  // Idle: booted, nothing served yet, ten seconds to settle.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const idle = new Map<Gateway, Memory>();
  for (const gateway of gateways) idle.set(gateway.name, await memoryOf(gateway));

  const targets: Record<string, { url: string; headers: Record<string, string> }> = {
    upstream: { url: upstreamUrl, headers: {} },
    baseline: { url: `http://127.0.0.1:${baselineReady.port}`, headers: {} },
    ...Object.fromEntries(gateways.map((g) => [g.name, { url: g.url, headers: g.headers }])),
  };
  const modes = ALL_MODES.filter((mode) => MODES.includes(mode));
  if (modes.length === 0) throw new Error(`BENCH_MODES names none of ${ALL_MODES.join(', ')}`);
  const targetNames: Target[] = ['upstream', 'baseline', ...gatewayNames];
  const serverOf = (target: Target) =>
    isGateway(target) ? gatewayOf(target).child : target === 'baseline' ? baseline.child : undefined;
  for (const mode of modes) {
    for (const target of targetNames) {
      await checkAnswer(target, targets[target]!.url, targets[target]!.headers, mode);
      if (isGateway(target)) gatewayOf(target).answered += 1;
    }
  }
  process.stdout.write(
    `turnpike bench: ${gateways.map((g) => `${g.name} (${g.database})`).join(', ')}; ${DURATION_S}s per measurement in ${ROUNDS} interleaved rounds after ${WARMUP_S}s warm-up, ` +
      `connections ${CONNECTIONS.join(',')}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(1)}, ` +
      `node ${process.version} ${PRODUCTION_NODE_FLAGS.join(' ')}\n`,
  );

  const results = new Map<string, Measured & { cpuMicrosPerRequest: number }>();
  const profiles: string[] = [];
  /** With BENCH_PERF, each measurement's steps per call, per server target (its first round). */
  const perfTables: [string, [string, Map<string, number>][]][] = [];
  /** With BENCH_SLOW_CALLS, when each gateway's c=1 runs took place. */
  const slowCallWindows = new Map<Gateway, Window[]>();
  const key = (mode: Mode, c: number, target: Target) => `${mode}/${c}/${target}`;
  let failed = 0;
  for (const mode of modes) {
    for (const c of CONNECTIONS) {
      const rounds = new Map<Target, Measured[]>(targetNames.map((target) => [target, []]));
      const cpuMicros = new Map<Target, number>(targetNames.map((target) => [target, 0]));
      const perfColumns: [string, Map<string, number>][] = [];
      // The targets take turns, round by round, so a change in what else the machine does (on a shared host, it
      // changes by the second) falls on all of them alike instead of on whichever ran at that moment.
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const target of targetNames) {
          const { url, headers } = targets[target]!;
          if (round === 0 && WARMUP_S > 0) {
            const warm = await load(target, url, headers, mode, c, {
              durationS: WARMUP_S,
              keepLatencies: false,
            });
            failed += warm.failed;
            if (isGateway(target)) {
              gatewayOf(target).answered += warm.ok;
              gatewayOf(target).cut += c;
            }
          }
          const server = serverOf(target);
          // The profile covers the first round of each measurement.
          const profile =
            profileDir && isGateway(target) && round === 0
              ? path.join(profileDir, `${target}-${mode}-c${c}.cpuprofile`)
              : '';
          if (profile) await ask(server as ChildProcess, { type: 'profile-start' }, 'profiling');
          const recording: PerfRecording | undefined =
            perfDir && server?.pid !== undefined && round === 0
              ? await recordPerf(server.pid, path.join(perfDir, `${target}-${mode}-c${c}.data`))
              : undefined;
          const cpuBefore = server ? (await ask(server, { type: 'cpu' }, 'cpu')).micros : 0;
          const from = Date.now();
          const run = await load(target, url, headers, mode, c, { durationS: DURATION_S / ROUNDS });
          if (slowCallsDir && c === 1 && isGateway(target))
            slowCallWindows.set(target, [
              ...(slowCallWindows.get(target) ?? []),
              { name: mode, from, to: Date.now() },
            ]);
          const cpuAfter = server ? (await ask(server, { type: 'cpu' }, 'cpu')).micros : 0;
          if (recording) perfColumns.push([target, await recording.stop(run.requests)]);
          if (profile) {
            await ask(server as ChildProcess, { type: 'profile-stop', file: profile }, 'profiled');
            profiles.push(profile);
          }
          rounds.get(target)?.push(run);
          cpuMicros.set(target, (cpuMicros.get(target) ?? 0) + cpuAfter - cpuBefore);
          failed += run.failed;
          if (isGateway(target)) {
            gatewayOf(target).answered += run.ok;
            gatewayOf(target).cut += c;
          }
        }
      }
      if (perfColumns.length > 0) perfTables.push([`${mode}, c=${c}`, perfColumns]);
      for (const target of targetNames) {
        const run = combine(rounds.get(target) ?? []);
        const hasServer = target !== 'upstream';
        const measured = {
          ...run,
          cpuMicrosPerRequest: hasServer ? (cpuMicros.get(target) ?? 0) / run.requests : Number.NaN,
        };
        results.set(key(mode, c, target), measured);
        process.stdout.write(
          `  ${mode.padEnd(16)} c=${String(c).padEnd(3)} ${target.padEnd(8)} ${measured.rps.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${ms(measured.p50)} ms  p99 ${ms(measured.p99)} ms  failed ${measured.failed}` +
            (hasServer ? `  CPU ${measured.cpuMicrosPerRequest.toFixed(0)} µs/req` : '') +
            '\n',
        );
      }
    }
  }
  const afterRuns = new Map<Gateway, Memory>();
  for (const gateway of gateways) afterRuns.set(gateway.name, await memoryOf(gateway));

  /** Adds what a stream probe did to a gateway's books: every stream that ended is billed, a failed one may be. */
  const countStreams = (target: Target, stats: StreamStats) => {
    if (!isGateway(target)) return;
    gatewayOf(target).answered += stats.streams - stats.failed;
    gatewayOf(target).cut += stats.failed;
  };

  // Time to first token: streams one after another from the upstream that answers at once.
  const ttft = new Map<Target, StreamStats>();
  if (TTFT_STREAMS > 0) {
    for (const target of targetNames) {
      const stats = await probeStreams({
        url: `${targets[target]!.url}/v1/chat/completions`,
        headers: targets[target]!.headers,
        body: streamBody(MODEL),
        streams: TTFT_STREAMS,
        concurrency: 1,
        expectedFrames: CONTENT_FRAMES,
      });
      countStreams(target, stats);
      ttft.set(target, stats);
    }
  }

  // Stream capacity: STREAMS streams at once from the slow upstream, RSS sampled while they are open.
  const capacity = new Map<Target, StreamStats & { rssOpen: number }>();
  if (STREAMS > 0) {
    for (const target of ['upstream', 'baseline', ...gatewayNames] as Target[]) {
      const server = target === 'baseline' ? slowBaseline?.child : serverOf(target);
      // With BENCH_CPU_PROF, the gateway's profile covers the whole capacity run (where its frame gaps come from).
      const profile =
        profileDir && isGateway(target)
          ? path.join(profileDir, `${target}-streams-${STREAMS}.cpuprofile`)
          : '';
      if (profile) await ask(server as ChildProcess, { type: 'profile-start' }, 'profiling');
      const probe = probeStreams({
        url: `${target === 'upstream' ? slowUpstreamUrl : target === 'baseline' ? slowBaselineUrl : targets[target]!.url}/v1/chat/completions`,
        headers: targets[target]!.headers,
        body: streamBody('gpt-4o'),
        streams: STREAMS,
        concurrency: STREAMS,
        expectedFrames: CONTENT_FRAMES,
      });
      let rssOpen = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling && server) {
          rssOpen = Math.max(rssOpen, (await ask(server, { type: 'rss' }, 'rss')).rss);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      const stats = await probe;
      sampling = false;
      await sampler;
      if (profile) {
        await ask(server as ChildProcess, { type: 'profile-stop', file: profile }, 'profiled');
        profiles.push(profile);
      }
      countStreams(target, stats);
      capacity.set(target, { ...stats, rssOpen });
    }
  }

  // RSS over a long run: sampled after 10%, 50% and 100% of the requests.
  const rssSamples = new Map<Gateway, ({ at: number } & Memory)[]>();
  if (RSS_REQUESTS > 0) {
    for (const gateway of gateways) {
      const samples: ({ at: number } & Memory)[] = [];
      let sent = 0;
      for (const share of [0.1, 0.5, 1]) {
        const upTo = Math.round(RSS_REQUESTS * share);
        const run = await load(gateway.name, gateway.url, gateway.headers, 'non-stream', 32, {
          amount: upTo - sent,
          keepLatencies: false,
        });
        failed += run.failed;
        gateway.answered += run.ok;
        sent = upTo;
        samples.push({ at: upTo, ...(await memoryOf(gateway)) });
      }
      rssSamples.set(gateway.name, samples);
    }
  }

  // The soak: mixed traffic (short calls, long streams, 200k-token prompts) for SOAK_MINUTES per gateway.
  const soaks = new Map<Gateway, number[]>();
  if (SOAK_MINUTES > 0) {
    for (const gateway of gateways) {
      const samples: number[] = [];
      const until = performance.now() + SOAK_MINUTES * 60_000;
      while (performance.now() < until) {
        const [short, streams] = await Promise.all([
          load(gateway.name, gateway.url, gateway.headers, 'non-stream', 16, {
            durationS: 30,
            keepLatencies: false,
          }),
          probeStreams({
            url: `${gateway.url}/v1/chat/completions`,
            headers: gateway.headers,
            body: streamBody('gpt-4o', SOAK_STREAM_FRAMES),
            streams: SOAK_STREAMS,
            concurrency: SOAK_STREAMS,
            expectedFrames: SOAK_STREAM_FRAMES,
          }),
          (async () => {
            for (let i = 0; i < 5; i += 1) {
              const response = await fetch(`${gateway.url}/v1/chat/completions`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', ...gateway.headers },
                body: HUGE_PROMPT_BODY,
              });
              await response.arrayBuffer();
              if (response.status === 200) gateway.answered += 1;
              else failed += 1;
            }
          })(),
        ]);
        failed += short.failed + streams.failed;
        gateway.answered += short.ok;
        gateway.cut += 16;
        countStreams(gateway.name, streams);
        samples.push((await memoryOf(gateway)).rss);
        process.stdout.write(
          `  soak ${gateway.name}: RSS ${mb(samples.at(-1) as number)}; ${streams.streams} long streams: ` +
            `${streams.failed} failed, ${streams.expectedFrames - streams.frames} frames lost, ` +
            `longest gap ${ms(streams.maxGaps.at(-1) ?? Number.NaN)} ms\n`,
        );
      }
      soaks.set(gateway.name, samples);
    }
  }

  const checks = new Map<Gateway, Extract<RelayChildMessage, { type: 'check' }>>();
  for (const gateway of gateways)
    checks.set(
      gateway.name,
      await ask(gateway.child, { type: 'check', expectedLogs: gateway.answered }, 'check'),
    );
  const peaks = new Map<Gateway, Memory>();
  for (const gateway of gateways) peaks.set(gateway.name, await memoryOf(gateway));

  // ---- the tables ----
  const rows: string[][] = [
    [
      'mode',
      'c',
      'target',
      'req/s',
      'p50 ms',
      'p99 ms',
      'added p50 ms',
      'added p99 ms',
      'x baseline',
      'CPU µs/req',
      'failed',
    ],
  ];
  for (const mode of modes) {
    for (const c of CONNECTIONS) {
      const direct = results.get(key(mode, c, 'upstream'));
      const base = results.get(key(mode, c, 'baseline'));
      for (const target of targetNames) {
        const m = results.get(key(mode, c, target));
        if (!m || !direct || !base) continue;
        rows.push([
          mode,
          String(c),
          target,
          m.rps.toFixed(0),
          ms(m.p50),
          ms(m.p99),
          target === 'upstream' ? '' : ms(m.p50 - direct.p50),
          target === 'upstream' ? '' : ms(m.p99 - direct.p99),
          isGateway(target) ? (m.rps / base.rps).toFixed(2) : '',
          Number.isNaN(m.cpuMicrosPerRequest) ? '' : m.cpuMicrosPerRequest.toFixed(0),
          String(m.failed),
        ]);
      }
    }
  }
  process.stdout.write(`\n${table(rows)}\n\n`);

  if (ttft.size > 0 || capacity.size > 0) {
    const direct = ttft.get('upstream');
    const streamRows: string[][] = [
      [
        'target',
        'TTFT p50 ms',
        'TTFT p99 ms',
        'added TTFT p99 ms',
        `${STREAMS} streams: failed`,
        'frames / expected',
        'max gap p99 ms',
        'max gap ms',
        'first token p99 ms',
        'answering at once',
        'RSS open',
      ],
    ];
    for (const target of targetNames) {
      const t = ttft.get(target);
      const cap = capacity.get(target);
      if (!t && !cap) continue;
      streamRows.push([
        target,
        t ? ms(percentile(t.ttft, 50)) : '',
        t ? ms(percentile(t.ttft, 99)) : '',
        t && direct && target !== 'upstream' ? ms(percentile(t.ttft, 99) - percentile(direct.ttft, 99)) : '',
        cap ? String(cap.failed) : '',
        cap ? `${cap.frames} / ${cap.expectedFrames}` : '',
        cap ? ms(percentile(cap.maxGaps, 99)) : '',
        cap ? ms(cap.maxGaps.at(-1) ?? Number.NaN) : '',
        // A stream that waits for an upstream connection shows here, not in its gaps.
        cap ? ms(percentile(cap.ttft, 99)) : '',
        cap ? String(cap.peakOpen) : '',
        cap && cap.rssOpen > 0 ? mb(cap.rssOpen) : '',
      ]);
    }
    process.stdout.write(
      `streams (TTFT: ${TTFT_STREAMS} one at a time from the instant upstream; capacity: a slow upstream, ` +
        `${SLOW_FIRST_TOKEN_MS} ms to the first token then a frame every ${SLOW_CHUNK_MS} ms)\n${table(streamRows)}\n\n`,
    );
  }

  const lines: string[] = [];
  for (const gateway of gateways) {
    const name = gateway.name;
    lines.push(`${name}: ${gateway.database}`);
    for (const mode of modes) {
      const g32 = results.get(key(mode, 32, name));
      const base32 = results.get(key(mode, 32, 'baseline'));
      if (g32 && base32) {
        const ratio = g32.rps / base32.rps;
        // The throughput target is the same-format path's; a converted call does a conversion's work on top, and
        // its throughput against the bare proxy is reported, its target being the added p99 at c=1.
        lines.push(
          isConverted(mode)
            ? `INFO  ${mode}: throughput at c=32 is ${ratio.toFixed(2)}x the baseline (the ${TARGETS.ratioAtC32}x target is the same-format path's)`
            : `${verdict(ratio >= TARGETS.ratioAtC32)}  ${mode}: throughput at c=32 is ${ratio.toFixed(2)}x the baseline (target ≥ ${TARGETS.ratioAtC32}x)`,
        );
      }
      const g1 = results.get(key(mode, 1, name));
      const direct1 = results.get(key(mode, 1, 'upstream'));
      if (g1 && direct1 && isConverted(mode)) {
        const added = g1.p99 - direct1.p99;
        lines.push(
          `${verdict(added <= TARGETS.convertedAddedP99AtC1Ms)}  ${mode}: adds ${ms(added)} ms at p99, c=1 (target ≤ ${TARGETS.convertedAddedP99AtC1Ms} ms)`,
        );
      } else if (g1 && direct1) {
        const addedP50 = g1.p50 - direct1.p50;
        const addedP99 = g1.p99 - direct1.p99;
        lines.push(
          `${verdict(addedP50 <= TARGETS.addedP50AtC1Ms)}  ${mode}: adds ${ms(addedP50)} ms at p50, c=1 (target ≤ ${TARGETS.addedP50AtC1Ms} ms)`,
          `${verdict(addedP99 <= TARGETS.addedP99AtC1Ms)}  ${mode}: adds ${ms(addedP99)} ms at p99, c=1 (target ≤ ${TARGETS.addedP99AtC1Ms} ms)`,
        );
      }
    }
    const t = ttft.get(name);
    const direct = ttft.get('upstream');
    if (t && direct) {
      const added = percentile(t.ttft, 99) - percentile(direct.ttft, 99);
      lines.push(
        `${verdict(added <= TARGETS.addedTtftP99Ms && t.failed === 0)}  streams: adds ${ms(added)} ms to the time to first token at p99 (target ≤ ${TARGETS.addedTtftP99Ms} ms)`,
      );
    }
    const cap = capacity.get(name);
    if (cap) {
      const maxGap = cap.maxGaps.at(-1) ?? Number.POSITIVE_INFINITY;
      lines.push(
        `${verdict(cap.failed === 0 && cap.frames === cap.expectedFrames && maxGap <= TARGETS.maxGapMs)}  ${STREAMS} concurrent streams: ${cap.failed} failed${
          cap.failed
            ? ` (${Object.entries(cap.failures)
                .map(([why, n]) => `${n} ${why}`)
                .join(', ')})`
            : ''
        }, ${cap.expectedFrames - cap.frames} frames lost, longest gap ${ms(maxGap)} ms (target: none, none, ≤ ${TARGETS.maxGapMs} ms)`,
        `${verdict(mib(cap.rssOpen) <= TARGETS.streamsRssMiB)}  RSS with ${cap.peakOpen} streams open: ${mb(cap.rssOpen)} (target ≤ ${TARGETS.streamsRssMiB} MiB)`,
      );
    }
    const idleMemory = idle.get(name) as Memory;
    lines.push(
      `${verdict(mib(idleMemory.rss) <= TARGETS.idleRssMiB[name])}  RSS idle ${mb(idleMemory.rss)} (target ≤ ${TARGETS.idleRssMiB[name]} MiB); ` +
        `after the timed runs ${mb((afterRuns.get(name) as Memory).rss)}; peak ${mb((peaks.get(name) as Memory).peak)}; ` +
        `JS heap after a full GC ${mb(idleMemory.heapAfterGc)} idle, ${mb((afterRuns.get(name) as Memory).heapAfterGc)} after the runs`,
    );
    const samples = rssSamples.get(name);
    if (samples?.length === 3) {
      const [first, , last] = samples as [{ rss: number }, unknown, { rss: number }];
      const growth = (last.rss - first.rss) / first.rss;
      const change = `${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%`;
      lines.push(
        `${verdict(growth <= TARGETS.rssGrowth)}  RSS over ${RSS_REQUESTS} requests: ${samples.map((s) => `${s.at}: ${mb(s.rss)}`).join(', ')} ` +
          `(${change} from the first sample; target ≤ ${TARGETS.rssGrowth * 100}%); JS heap after a full GC ${samples.map((s) => mb(s.heapAfterGc)).join(', ')}; ` +
          `heap held ${samples.map((s) => mb(s.heapTotal)).join(', ')}; external ${samples.map((s) => mb(s.external)).join(', ')}`,
      );
    }
    const soak = soaks.get(name);
    if (soak && soak.length >= 3) {
      // The first cycle is the warm-up: its long streams (~25 s) are the first of that length the process serves,
      // and it ends before the process has held a whole cycle's working set. Growth is read from the end of the
      // second cycle (a warm process) to the end; the first sample is printed beside it.
      const [first, warm] = soak as [number, number];
      const growth = ((soak.at(-1) as number) - warm) / warm;
      lines.push(
        `${verdict(growth < TARGETS.soakGrowth)}  soak of ${SOAK_MINUTES} min: RSS ${mb(warm)} after the second cycle → ${mb(soak.at(-1) as number)} ` +
          `(${(growth * 100).toFixed(1)}%, max ${mb(Math.max(...soak))}; target < ${TARGETS.soakGrowth * 100}%); after the first cycle ${mb(first)}`,
      );
    }
    const check = checks.get(name) as Extract<RelayChildMessage, { type: 'check' }>;
    const quotaOk =
      check.quotaDrop === check.loggedQuota &&
      check.logged >= gateway.answered &&
      check.logged <= gateway.answered + gateway.cut;
    lines.push(
      `${verdict(quotaOk)}  billing: the user's quota dropped by ${check.quotaDrop}, the consume logs sum to ${check.loggedQuota}; ` +
        `${check.logged} logs for ${gateway.answered} answers seen (+ at most ${gateway.cut} cut off when timed runs stopped)`,
    );
  }
  lines.push(`${verdict(failed === 0)}  failed requests: ${failed} (must be 0)`);
  process.stdout.write(`${lines.join('\n')}\n`);

  await Promise.all([
    ...gateways.map((g) => stopChild(g.child)),
    stopChild(baseline.child),
    ...(slowBaseline ? [stopChild(slowBaseline.child)] : []),
  ]);
  for (const child of children) await stopChild(child);
  for (const file of profiles) {
    process.stdout.write(`\nCPU profile of one measured run: ${file}\n`);
    process.stdout.write(`${summariseCpuProfile(file, 20)}\n`);
  }
  for (const [measurement, columns] of perfTables) {
    process.stdout.write(
      `\nOn-CPU profile (perf) of the first round, ${measurement}:\n${phasesTable(columns)}\n`,
    );
  }
  if (perfDir) process.stdout.write(`(perf data: ${perfDir})\n`);
  if (slowCallsDir)
    for (const gateway of gateways) {
      const windows = slowCallWindows.get(gateway.name) ?? [];
      if (windows.length === 0) continue;
      process.stdout.write(
        `\nThe slowest calls at c=1, by what they overlapped (server-side times; bench/slow-calls.ts):\n` +
          `${slowCallsTable(gateway.name, path.join(slowCallsDir, `${gateway.name}.json`), windows)}\n`,
      );
    }
  // The whole cost of a call, the database's and Redis's CPU included (bench/cost.ts): this checkout alone.
  if (process.env.BENCH_COST !== '0') await measureWholeCost([root]);
  process.stdout.write(`\nbench took ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    for (const child of children) child.kill('SIGKILL');
    process.exit(1);
  },
);

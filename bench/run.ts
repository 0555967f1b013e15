/**
 * `make bench`: throughput and latency of the relay beside the upstream itself and a minimal passthrough proxy,
 * all on loopback. See bench/README.md for what is measured and why it is set up this way.
 *
 * Settings (environment): BENCH_DURATION (s per measurement, 8), BENCH_ROUNDS (turns it is split into, 4),
 * BENCH_WARMUP (s before each, 2),
 * BENCH_CONNECTIONS (`1,32`), BENCH_RSS_REQUESTS (100000; 0 skips the RSS run), TEST_POSTGRES_URL (a Postgres
 * server where the relay gets a database of its own; default embedded PGlite in a temporary directory),
 * BENCH_RELAY_LOG (file for the relay's
 * request log; default /dev/null), BENCH_CPU_PROF (1: take a V8 CPU profile of the relay during each of its
 * measured runs and print where the time goes).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { summariseCpuProfile } from './cpu-profile.ts';
import type { RelayChildMessage, RelayParentMessage } from './relay-main.ts';

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
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,32').split(',').map(Number);
const CPU_PROFILE = process.env.BENCH_CPU_PROF === '1';
const MODES = (process.env.BENCH_MODES ?? 'non-stream,stream,converted,converted-stream').split(',');
const MODEL = 'gpt-4o-mini';

const TARGETS = {
  ratioAtC32: 0.7,
  addedP50AtC1Ms: 0.3,
  /** The converted path (an Anthropic client on an OpenAI upstream): added p99 at c=1 (issue 18). */
  convertedAddedP99AtC1Ms: 1.5,
  rssGrowth: 0.1,
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
type Target = 'upstream' | 'baseline' | 'relay';

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
  if (target === 'relay' && isConverted(mode))
    return { path: '/v1/messages', body: messagesBody(mode === 'converted-stream') };
  return { path: '/v1/chat/completions', body: chatBodies[isStreamMode(mode) ? 'stream' : 'non-stream'] };
}

// ---- processes ----------------------------------------------------------------------------------------------

const children: ChildProcess[] = [];

async function startUpstream(): Promise<string> {
  const child = spawn(
    process.execPath,
    [path.join(root, 'relay/src/testing/fake-openai-main.ts'), '--port', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (data: Buffer) => {
      seen += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the fake upstream exited (${code})`)));
  });
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
  const anthropic = target === 'relay' && isConverted(mode);
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
    target !== 'relay' ||
    mode === 'converted-stream' ||
    (mode === 'stream'
      ? /: x-turnpike-quota: \d+/.test(text)
      : /^\d+$/.test(response.headers.get('x-turnpike-quota') ?? ''));
  if (!isComplete || !isBilled)
    throw new Error(`${target} ${mode}: unexpected answer ${response.status} ${text.slice(0, 300)}`);
}

// ---- report -------------------------------------------------------------------------------------------------

const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(3));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
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

async function main() {
  const startedAt = performance.now();
  const upstreamUrl = await startUpstream();
  const profileDir = CPU_PROFILE ? mkdtempSync(path.join(os.tmpdir(), 'turnpike-bench-prof-')) : undefined;
  const relayLog = openSync(process.env.BENCH_RELAY_LOG ?? '/dev/null', 'a');
  const baseline = forkChild<{ type: 'ready'; port: number }>('baseline-main.ts', [upstreamUrl]);
  const relay = forkChild<Extract<RelayChildMessage, { type: 'ready' }>>('relay-main.ts', [upstreamUrl], {
    stdout: relayLog,
    execArgv: ['--expose-gc'],
  });
  const [baselineReady, relayReady] = await Promise.all([baseline.ready, relay.ready]);

  const targets: Record<Target, { url: string; headers: Record<string, string> }> = {
    upstream: { url: upstreamUrl, headers: {} },
    baseline: { url: `http://127.0.0.1:${baselineReady.port}`, headers: {} },
    relay: {
      url: `http://127.0.0.1:${relayReady.port}`,
      headers: { authorization: `Bearer ${relayReady.token}` },
    },
  };
  const modes = ALL_MODES.filter((mode) => MODES.includes(mode));
  if (modes.length === 0) throw new Error(`BENCH_MODES names none of ${ALL_MODES.join(', ')}`);
  const targetNames = Object.keys(targets) as Target[];
  let relayAnswered = 0;
  // A timed run stops with up to `connections` requests in flight: the relay still bills those, unseen.
  let relayCut = 0;
  for (const mode of modes) {
    for (const target of targetNames) {
      await checkAnswer(target, targets[target].url, targets[target].headers, mode);
      if (target === 'relay') relayAnswered += 1;
    }
  }
  process.stdout.write(
    `turnpike bench: relay on ${relayReady.database}, ${DURATION_S}s per measurement in ${ROUNDS} interleaved rounds after ${WARMUP_S}s warm-up, ` +
      `connections ${CONNECTIONS.join(',')}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(1)}, ` +
      `node ${process.version}\n`,
  );

  const memoryBefore = await ask(relay.child, { type: 'rss' }, 'rss');
  const results = new Map<string, Measured & { cpuMicrosPerRequest: number }>();
  const profiles: string[] = [];
  const key = (mode: Mode, c: number, target: Target) => `${mode}/${c}/${target}`;
  let failed = 0;
  for (const mode of modes) {
    for (const c of CONNECTIONS) {
      const rounds = new Map<Target, Measured[]>(targetNames.map((target) => [target, []]));
      const cpuMicros = new Map<Target, number>(targetNames.map((target) => [target, 0]));
      // The targets take turns, round by round, so a change in what else the machine does (on a shared host, it
      // changes by the second) falls on all three alike instead of on whichever ran at that moment.
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const target of targetNames) {
          const { url, headers } = targets[target];
          if (round === 0 && WARMUP_S > 0) {
            const warm = await load(target, url, headers, mode, c, {
              durationS: WARMUP_S,
              keepLatencies: false,
            });
            failed += warm.failed;
            if (target === 'relay') {
              relayAnswered += warm.ok;
              relayCut += c;
            }
          }
          const server =
            target === 'relay' ? relay.child : target === 'baseline' ? baseline.child : undefined;
          // The profile covers the first round of each measurement.
          const profile =
            profileDir && target === 'relay' && round === 0
              ? path.join(profileDir, `relay-${mode}-c${c}.cpuprofile`)
              : '';
          if (profile) await ask(relay.child, { type: 'profile-start' }, 'profiling');
          const cpuBefore = server ? (await ask(server, { type: 'cpu' }, 'cpu')).micros : 0;
          const run = await load(target, url, headers, mode, c, { durationS: DURATION_S / ROUNDS });
          const cpuAfter = server ? (await ask(server, { type: 'cpu' }, 'cpu')).micros : 0;
          if (profile) {
            await ask(relay.child, { type: 'profile-stop', file: profile }, 'profiled');
            profiles.push(profile);
          }
          rounds.get(target)?.push(run);
          cpuMicros.set(target, (cpuMicros.get(target) ?? 0) + cpuAfter - cpuBefore);
          failed += run.failed;
          if (target === 'relay') {
            relayAnswered += run.ok;
            relayCut += c;
          }
        }
      }
      for (const target of targetNames) {
        const run = combine(rounds.get(target) ?? []);
        const hasServer = target !== 'upstream';
        const measured = {
          ...run,
          cpuMicrosPerRequest: hasServer ? (cpuMicros.get(target) ?? 0) / run.requests : Number.NaN,
        };
        results.set(key(mode, c, target), measured);
        process.stdout.write(
          `  ${mode.padEnd(10)} c=${String(c).padEnd(3)} ${target.padEnd(8)} ${measured.rps.toFixed(0).padStart(6)} req/s  ` +
            `p50 ${ms(measured.p50)} ms  p99 ${ms(measured.p99)} ms  failed ${measured.failed}` +
            (hasServer ? `  CPU ${measured.cpuMicrosPerRequest.toFixed(0)} µs/req` : '') +
            '\n',
        );
      }
    }
  }
  const memoryAfter = await ask(relay.child, { type: 'rss' }, 'rss');

  // RSS over a long run: sampled after 10%, 50% and 100% of the requests.
  const rssSamples: { at: number; rss: number; heapAfterGc: number }[] = [];
  if (RSS_REQUESTS > 0) {
    let sent = 0;
    for (const share of [0.1, 0.5, 1]) {
      const upTo = Math.round(RSS_REQUESTS * share);
      const run = await load('relay', targets.relay.url, targets.relay.headers, 'non-stream', 32, {
        amount: upTo - sent,
        keepLatencies: false,
      });
      failed += run.failed;
      relayAnswered += run.ok;
      sent = upTo;
      rssSamples.push({ at: upTo, ...(await ask(relay.child, { type: 'rss' }, 'rss')) });
    }
  }

  const check = await ask(relay.child, { type: 'check', expectedLogs: relayAnswered }, 'check');

  // ---- the table ----
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
      'relay/baseline',
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
          target === 'relay' ? `${((m.rps / base.rps) * 100).toFixed(0)}%` : '',
          Number.isNaN(m.cpuMicrosPerRequest) ? '' : m.cpuMicrosPerRequest.toFixed(0),
          String(m.failed),
        ]);
      }
    }
  }
  process.stdout.write(`\n${table(rows)}\n\n`);

  const lines: string[] = [];
  for (const mode of modes) {
    const relay32 = results.get(key(mode, 32, 'relay'));
    const base32 = results.get(key(mode, 32, 'baseline'));
    if (relay32 && base32) {
      const ratio = relay32.rps / base32.rps;
      // The throughput target is the same-format path's; a converted call does a conversion's work on top, and
      // its throughput against the bare proxy is reported, its target being the added p99 at c=1.
      lines.push(
        isConverted(mode)
          ? `INFO  ${mode}: relay throughput at c=32 is ${(ratio * 100).toFixed(0)}% of the baseline (reported; the ${TARGETS.ratioAtC32 * 100}% target is the same-format path's)`
          : `${verdict(ratio >= TARGETS.ratioAtC32)}  ${mode}: relay throughput at c=32 is ${(ratio * 100).toFixed(0)}% of the baseline (target ≥ ${TARGETS.ratioAtC32 * 100}%)`,
      );
    }
    const relay1 = results.get(key(mode, 1, 'relay'));
    const direct1 = results.get(key(mode, 1, 'upstream'));
    if (relay1 && direct1 && isConverted(mode)) {
      const added = relay1.p99 - direct1.p99;
      lines.push(
        `${verdict(added <= TARGETS.convertedAddedP99AtC1Ms)}  ${mode}: relay adds ${ms(added)} ms at p99, c=1 (target ≤ ${TARGETS.convertedAddedP99AtC1Ms} ms)`,
      );
    } else if (relay1 && direct1) {
      const added = relay1.p50 - direct1.p50;
      lines.push(
        `${verdict(added <= TARGETS.addedP50AtC1Ms)}  ${mode}: relay adds ${ms(added)} ms at p50, c=1 (target ≤ ${TARGETS.addedP50AtC1Ms} ms)`,
      );
    }
  }
  lines.push(
    `       relay RSS before the runs ${mb(memoryBefore.rss)}, after ${mb(memoryAfter.rss)} ` +
      `(JS heap after a full GC: ${mb(memoryBefore.heapAfterGc)} → ${mb(memoryAfter.heapAfterGc)})`,
  );
  if (rssSamples.length === 3) {
    const [first, , last] = rssSamples as [{ rss: number }, unknown, { rss: number }];
    const growth = (last.rss - first.rss) / first.rss;
    const samples = rssSamples.map((s) => `${s.at}: ${mb(s.rss)}`).join(', ');
    const change = `${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%`;
    lines.push(
      `${verdict(growth <= TARGETS.rssGrowth)}  relay RSS over ${RSS_REQUESTS} requests: ${samples} ` +
        `(${change} from the first sample; target ≤ ${TARGETS.rssGrowth * 100}%)`,
    );
    lines.push(
      `       JS heap after a full GC at the same points: ${rssSamples.map((s) => mb(s.heapAfterGc)).join(', ')}`,
    );
  }
  lines.push(`${verdict(failed === 0)}  failed requests: ${failed} (must be 0)`);
  const quotaOk =
    check.quotaDrop === check.loggedQuota &&
    check.logged >= relayAnswered &&
    check.logged <= relayAnswered + relayCut;
  lines.push(
    `${verdict(quotaOk)}  billing: the user's quota dropped by ${check.quotaDrop}, the consume logs sum to ${check.loggedQuota}; ` +
      `${check.logged} logs for ${relayAnswered} answers seen (+ at most ${relayCut} cut off when timed runs stopped)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);

  await Promise.all([stopChild(relay.child), stopChild(baseline.child)]);
  for (const child of children) await stopChild(child);
  for (const file of profiles) {
    process.stdout.write(`\nrelay CPU profile of one measured run: ${file}\n`);
    process.stdout.write(`${summariseCpuProfile(file, 20)}\n`);
  }
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

/**
 * On-CPU profiles of the bench's servers (`BENCH_PERF=1`), split into the steps of a call, so the relay's CPU per
 * call can be read step by step beside the bare proxy's.
 *
 * Linux `perf record -e cpu-clock` samples a process only while one of its threads runs on a CPU. The V8 profile
 * (`BENCH_CPU_PROF`) samples wall time instead: on a loaded two-core host a sample taken while the relay waits to be
 * scheduled again lands in whatever it was doing (a socket write, most often), which made the socket writes look
 * twice as dear in the relay as in the proxy. Node is started with {@link perfNodeFlags} so perf can name its
 * JavaScript frames.
 *
 * Each sample is given to the first step whose pattern one of its frames matches, in the order of {@link STEPS}:
 * the collector first (its samples have no call's frames), then the steps nested deepest (the answer's socket
 * write happens inside the relay's answer step, and is counted as the write). Only the frames of the event loop's
 * task the sample fell in are matched ({@link TASK_START}). `node bench/perf-phases.ts
 * <perf.data> <calls>` prints one profile's table.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The node flags that make V8 describe its generated code to perf (a jitdump file in `dir`, which `perf inject
 * --jit` turns into symbols). The simpler `--perf-basic-prof` map names a code address after the first function
 * that ever had it, and V8 reuses the addresses of code it has dropped, so frames got other functions' names.
 */
export const perfNodeFlags = (dir: string) => ['--perf-prof', `--perf-prof-path=${dir}`];

const SAMPLE_HZ = 1999;

/** Steps of a call, in the order a sample is matched against them (see the file's comment). */
const STEPS: readonly (readonly [string, RegExp])[] = [
  ['garbage collection', /Scavenger|ConcurrentMarking|MarkCompact|Heap::CollectGarbage|Sweeper|^V8 helper$/],
  ['database thread (PGlite)', /^database thread$/],
  ['prompt tokens for the hold', /JS:estimateOf |countChatPromptTokens|get promptTokens/],
  [
    'answer written to the client',
    /JS:end node:_http_outgoing|JS:writeHead node:_http_server|JS:sendJsonRaw |sendStream \S*fastify|onSendEnd/,
  ],
  ['settlement spool (writeSync)', /settlement-spool|JS:writeSync node:fs/],
  [
    'batched writer and its flush (pg)',
    /relay\/src\/pipeline\/writer|write-records|node_modules\/pg\/|drizzle-orm/,
  ],
  ['metrics', /relay\/src\/metrics|prom-client/],
  ['settlement (bill, ledger, log row)', /JS:settle \S*relay|JS:billUsage|core\/src\/billing/],
  [
    'upstream request sent',
    /JS:request \S*relay\/src\/upstream|JS:request \S*undici\/lib\/api|JS:dispatch \S*undici|writeH1|JS:_?resume \S*undici/,
  ],
  [
    'upstream answer read',
    /onHttpSocketReadable|JS:readText |undici\/lib\/api\/readable|JS:execute \S*undici|wasm/,
  ],
  ['authentication', /relay\/src\/pipeline\/authenticate|auth-cache/],
  ['routing and affinity', /relay\/src\/routing|choose-channel/],
  [
    'request parsed (HTTP, JSON body)',
    /front-door|parserOnIncoming|parserOnHeadersComplete|llhttp|JS:parseBody /,
  ],
  ['the rest of the relay pipeline', /relay\/src\/|core\/src\//],
  ['the proxy handler (Fastify)', /baseline-main|node_modules\/fastify/],
  ['Node streams, events, ticks', /node:internal\/streams|node:events|task_queues|JS:emit /],
  ['waiting for events (epoll)', /epoll_pwait|uv__io_poll$/],
];
const OTHER = 'Node and V8 runtime (other)';

/** What perf calls a thread, as a step's pattern names it. */
function threadOf(comm: string): string | undefined {
  if (comm === 'MainThread' || comm === 'node') return undefined;
  if (comm.startsWith('V8') || comm.startsWith('DelayedTask')) return 'V8 helper';
  // PGlite's worker thread (ADR 0036) is a Node worker: libuv and V8 name it neither of the above.
  return 'database thread';
}

/**
 * Where a task of the event loop starts: a promise continuation, a tick, an immediate or a timer. Frames below it
 * belong to whatever callback happened to drain the queue (often the database client's socket read, when the
 * writer's query answers), not to the task, so a sample is matched on the frames above it only.
 */
const TASK_START =
  /^Builtins_RunMicrotasks$|^JS:processTicksAndRejections |^JS:processImmediate |^JS:listOnTimeout /;

/** CPU time per step (µs per call) of `perf script` text. */
export function phasesOf(script: string, calls: number): Map<string, number> {
  const samples = new Map<string, number>();
  for (const block of script.split('\n\n')) {
    const lines = block.split('\n').filter((line) => line !== '');
    const head = lines[0];
    if (head === undefined) continue;
    const comm = head.trim().split(/\s+/)[0] ?? '';
    // perf lists a sample's frames from the innermost out; they are read up to the task's start.
    const frames: string[] = [];
    const thread = threadOf(comm);
    if (thread) frames.push(thread);
    for (const line of lines.slice(1)) {
      const match = /^\s*[0-9a-f]+ (.*) \((.*)\)$/.exec(line);
      if (!match?.[1]) continue;
      const frame = match[1].replace(/\+0x[0-9a-f]+$/, '').replace(/^JS:[*+^~']*/, 'JS:');
      if (TASK_START.test(frame)) break;
      frames.push(frame);
    }
    const step = STEPS.find(([, pattern]) => frames.some((frame) => pattern.test(frame)))?.[0] ?? OTHER;
    samples.set(step, (samples.get(step) ?? 0) + 1);
  }
  const perCall = new Map<string, number>();
  for (const [step, count] of samples) perCall.set(step, (count / SAMPLE_HZ / calls) * 1e6);
  return perCall;
}

/** A running `perf record` of one process; `stop` ends it and reads the samples, per call. */
export interface PerfRecording {
  stop(calls: number): Promise<Map<string, number>>;
}

export async function recordPerf(pid: number, file: string): Promise<PerfRecording> {
  const perf: ChildProcess = spawn(
    'perf',
    ['record', '-k', '1', '-e', 'cpu-clock', '-F', String(SAMPLE_HZ), '-g', '-p', String(pid), '-o', file],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  perf.stderr?.on('data', (data: Buffer) => {
    errors += data.toString();
  });
  // perf attaches to every thread of the process before it samples; give it that moment.
  await new Promise((resolve) => setTimeout(resolve, 300));
  if (perf.exitCode !== null) throw new Error(`perf record failed: ${errors.trim()}`);
  return {
    async stop(calls) {
      const exited = new Promise((resolve) => perf.once('exit', resolve));
      perf.kill('SIGINT');
      await exited;
      return phasesOf(perfScript(file), calls);
    },
  };
}

/** The samples of a recording as text, its JavaScript frames named from V8's jitdump. */
function perfScript(file: string): string {
  const injected = `${file}.jit`;
  const inject = spawnSync('perf', ['inject', '--jit', '-i', file, '-o', injected], { encoding: 'utf8' });
  if (inject.status !== 0) throw new Error(`perf inject failed: ${inject.stderr}`);
  const result = spawnSync('perf', ['script', '-i', injected], { maxBuffer: 1 << 30, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`perf script failed: ${result.stderr}`);
  return result.stdout;
}

/** Whether `perf record` can sample here (installed, and allowed by `perf_event_paranoid`). */
export function perfAvailable(): boolean {
  const result = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', '--', 'true'], {
    stdio: 'ignore',
  });
  return result.status === 0;
}

/** The steps side by side, one column per target, in µs per call; the steps in the order of {@link STEPS}. */
export function phasesTable(columns: readonly (readonly [string, Map<string, number>])[]): string {
  const steps = [...STEPS.map(([step]) => step), OTHER].filter((step) =>
    columns.some(([, phases]) => (phases.get(step) ?? 0) >= 0.5),
  );
  const cell = (value: number | undefined) => (value === undefined ? '' : value.toFixed(0));
  const total = (phases: Map<string, number>) => [...phases.values()].reduce((a, b) => a + b, 0);
  const rows = [
    `| step (µs of CPU per call) | ${columns.map(([name]) => name).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    ...steps.map(
      (step) => `| ${step} | ${columns.map(([, phases]) => cell(phases.get(step))).join(' | ')} |`,
    ),
    `| **total** | ${columns.map(([, phases]) => cell(total(phases))).join(' | ')} |`,
  ];
  return rows.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, calls] = process.argv.slice(2);
  if (!file || !calls) throw new Error('usage: perf-phases.ts <perf.data> <calls>');
  process.stdout.write(`${phasesTable([[file, phasesOf(perfScript(file), Number(calls))]])}\n`);
}

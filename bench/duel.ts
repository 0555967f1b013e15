/**
 * `make bench-duel`: the relay's CPU per call in two checkouts, measured side by side. On a shared host a single
 * `make bench` run moves by several points from one minute to the next, more than most changes are worth; here
 * both relays (each checkout's own `bench/relay-main.ts`, on one fake upstream) take the same load at the same
 * time, so whatever else the host does falls on both. Each round gives the ratio B / A of user CPU per answered
 * call (kernel time, mostly loopback sockets, is the same work for both and only adds noise); the median of the
 * rounds is the verdict. Not a test and not part of `make bench`.
 *
 * `node bench/duel.ts <checkout A> <checkout B>`; a checkout is a directory with the repository's files and its
 * dependencies installed (a `git worktree` of another commit with `npm ci`, or links to this one's node_modules).
 * Settings: DUEL_MODE (`non-stream`, `stream`, `converted` or `converted-stream`; non-stream), DUEL_ROUNDS (10), DUEL_SECONDS (5 per
 * round), DUEL_CONNECTIONS (16 per relay), TEST_POSTGRES_URL (as for make bench). DUEL_NODE_ARGS_A / _B (node flags,
 * space-separated) and DUEL_ENV_A / _B (`KEY=value` pairs) start one side differently, so the same checkout can
 * duel itself with other V8 or allocator settings; each round then prints the total CPU (user and kernel) too, as
 * an allocator setting moves work into the kernel.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { startFakeUpstream } from './fake-upstream.ts';
import type { RelayChildMessage } from './relay-main.ts';

const numberFromEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const MODE = process.env.DUEL_MODE ?? 'non-stream';
const ROUNDS = Math.round(numberFromEnv('DUEL_ROUNDS', 10));
const SECONDS = numberFromEnv('DUEL_SECONDS', 5);
const CONNECTIONS = Math.round(numberFromEnv('DUEL_CONNECTIONS', 16));

const checkouts = process.argv.slice(2).map((dir) => path.resolve(dir));
if (checkouts.length !== 2) throw new Error('usage: node bench/duel.ts <checkout A> <checkout B>');
if (!['non-stream', 'stream', 'converted', 'converted-stream'].includes(MODE))
  throw new Error(`unknown DUEL_MODE ${MODE}`);

const messages = [{ role: 'user', content: 'Say hello.' }];
const request =
  MODE === 'converted' || MODE === 'converted-stream'
    ? {
        path: '/v1/messages',
        body: {
          model: 'gpt-4o-mini',
          max_tokens: 256,
          messages,
          ...(MODE === 'converted-stream' ? { stream: true } : {}),
        },
      }
    : {
        path: '/v1/chat/completions',
        body:
          MODE === 'stream'
            ? { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages }
            : { model: 'gpt-4o-mini', messages },
      };

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

async function startUpstream(checkout: string): Promise<string> {
  const { child, url } = await startFakeUpstream(checkout);
  children.push(child);
  return url;
}

interface Relay {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
}

const wordsOf = (name: string): string[] => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(
    wordsOf(name).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

async function startRelay(checkout: string, upstream: string, side: 'A' | 'B'): Promise<Relay> {
  const child = fork(path.join(checkout, 'bench/relay-main.ts'), [upstream], {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: wordsOf(`DUEL_NODE_ARGS_${side}`),
    env: { ...process.env, ...envOf(`DUEL_ENV_${side}`) },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.on('message', (message: RelayChildMessage) => {
      if (message.type === 'ready')
        resolve({ child, url: `http://127.0.0.1:${message.port}`, token: message.token });
    });
    child.once('exit', (code) => reject(new Error(`the relay of ${checkout} exited (${code})`)));
  });
}

/** User CPU time of the relay so far (all CPU time from a checkout whose relay reports no user part), and all. */
function cpuOf(relay: Relay): Promise<{ user: number; total: number }> {
  return new Promise((resolve) => {
    const onMessage = (message: RelayChildMessage) => {
      if (message.type !== 'cpu') return;
      relay.child.off('message', onMessage);
      resolve({ user: message.userMicros ?? message.micros, total: message.micros });
    };
    relay.child.on('message', onMessage);
    relay.child.send({ type: 'cpu' });
  });
}

async function load(relay: Relay, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `${relay.url}${request.path}`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${relay.token}`,
      'x-api-key': relay.token,
    },
    body: JSON.stringify(request.body),
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} answers other than 2xx and ${result.errors} errors`);
  return result['2xx'];
}

const upstream = await startUpstream(checkouts[0] as string);
const relays: Relay[] = [];
for (const [i, checkout] of checkouts.entries())
  relays.push(await startRelay(checkout, upstream, i ? 'B' : 'A'));
const settingsOf = (side: 'A' | 'B') =>
  [process.env[`DUEL_NODE_ARGS_${side}`], process.env[`DUEL_ENV_${side}`]].filter(Boolean).join(' ');
process.stdout.write(
  `duel: ${MODE}, ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections per relay\n` +
    `  A ${checkouts[0]} ${settingsOf('A')}\n  B ${checkouts[1]} ${settingsOf('B')}\n`,
);
await Promise.all(relays.map((relay) => load(relay, 2)));

const ratios: number[] = [];
const totalRatios: number[] = [];
const totals = relays.map(() => ({ micros: 0, calls: 0 }));
for (let round = 1; round <= ROUNDS; round += 1) {
  const before = await Promise.all(relays.map(cpuOf));
  const calls = await Promise.all(relays.map((relay) => load(relay, SECONDS)));
  const after = await Promise.all(relays.map(cpuOf));
  const perCall = relays.map((_, i) => (after[i]!.user - before[i]!.user) / calls[i]!);
  const totalPerCall = relays.map((_, i) => (after[i]!.total - before[i]!.total) / calls[i]!);
  relays.forEach((_, i) => {
    totals[i]!.micros += after[i]!.user - before[i]!.user;
    totals[i]!.calls += calls[i]!;
  });
  const ratio = perCall[1]! / perCall[0]!;
  ratios.push(ratio);
  totalRatios.push(totalPerCall[1]! / totalPerCall[0]!);
  process.stdout.write(
    `  round ${round}: A ${perCall[0]?.toFixed(1)} µs/call, B ${perCall[1]?.toFixed(1)} µs/call, B/A ${ratio.toFixed(3)}` +
      ` (user and kernel: B/A ${totalRatios.at(-1)!.toFixed(3)})\n`,
  );
}
const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const median = medianOf(ratios);
const mean = totals.map(({ micros, calls }) => (micros / calls).toFixed(1));
process.stdout.write(
  `B/A user CPU per call: median ${median.toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(3)).join(' ')}); ` +
    `over all rounds A ${mean[0]} µs, B ${mean[1]} µs; user and kernel B/A median ${medianOf(totalRatios).toFixed(3)}\n`,
);
for (const relay of relays) relay.child.send({ type: 'stop' });
process.exit(0);

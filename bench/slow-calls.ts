/**
 * Why the slowest calls at concurrency 1 are slow (`BENCH_SLOW_CALLS=1`): each gateway runs with
 * bench/slow-calls-probe.ts, which records every call's server-side time, the GC pauses and the database queries
 * (`pg`'s, or the embedded database thread's: the batched writer's flushes, mostly). Each c=1 measurement's calls
 * are then sorted by what they overlapped: a query in flight, a GC pause, both, or neither, and the table shows how
 * the slowest 1 % divide among those and the p99 of each kind. A call that overlaps nothing is slow only by the
 * host's scheduling.
 *
 * The times are the server's (from the request's arrival to the answer's last write); the client's added p99 also
 * holds loopback and the client's own scheduling.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SlowCallsData } from './slow-calls-probe.ts';

/** The node flags that load the probe; the process's env needs `BENCH_SLOW_CALLS_FILE` too. */
export const slowCallsNodeFlags = () => [
  '--import',
  fileURLToPath(new URL('./slow-calls-probe.ts', import.meta.url)),
];

/** One measured run's time span, Unix ms; a measurement's rounds share its name. */
export interface Window {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

type Kind = 'query in flight' | 'GC pause' | 'both' | 'neither';
const KINDS: readonly Kind[] = ['query in flight', 'GC pause', 'both', 'neither'];

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);

/**
 * Whether [from, to] meets one of `spans` (sorted by start). Spans are short (a pause, a query), so only the 64
 * spans that start last before `to` can still be running at `from`.
 */
function meets(spans: readonly [number, number][], from: number, to: number): boolean {
  // How many spans start before `to`.
  let low = 0;
  let high = spans.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((spans[mid] as [number, number])[0] < to) low = mid + 1;
    else high = mid;
  }
  for (let i = low - 1; i >= 0 && i >= low - 64; i -= 1)
    if ((spans[i] as [number, number])[1] > from) return true;
  return false;
}

const ms = (value: number) => (Number.isNaN(value) ? '—' : value.toFixed(2));

/** A table per gateway: for each window, the slowest 1 % of its calls by what they overlapped. */
export function slowCallsTable(gateway: string, file: string, windows: readonly Window[]): string {
  const data = JSON.parse(readFileSync(file, 'utf8')) as SlowCallsData;
  const byStart = (a: [number, number], b: [number, number]) => a[0] - b[0];
  const gcs = [...data.gcs].sort(byStart);
  const queries = [...data.queries].sort(byStart);
  const rows = [
    `| ${gateway}, c=1 | calls | server p50 / p99 ms | of the slowest 1 %: ${KINDS.join(' / ')} | p99 ms when: ${KINDS.join(' / ')} | share of all calls: ${KINDS.join(' / ')} |`,
    '|---|---|---|---|---|---|',
  ];
  // A measurement's rounds are windows of the same name.
  const names = [...new Set(windows.map((window) => window.name))];
  for (const name of names) {
    const spans = windows.filter((window) => window.name === name);
    const calls = data.calls.filter(([arrived]) =>
      spans.some((window) => arrived >= window.from && arrived < window.to),
    );
    if (calls.length === 0) continue;
    const measured = calls.map(([arrived, answered]) => {
      const query = meets(queries, arrived, answered);
      const gc = meets(gcs, arrived, answered);
      const kind: Kind = query && gc ? 'both' : query ? 'query in flight' : gc ? 'GC pause' : 'neither';
      return { kind, ms: answered - arrived };
    });
    const sortedOf = (kind?: Kind) =>
      measured
        .filter((call) => kind === undefined || call.kind === kind)
        .map((call) => call.ms)
        .sort((a, b) => a - b);
    const sorted = sortedOf();
    const p99 = quantile(sorted, 0.99);
    const slow = measured.filter((call) => call.ms >= p99);
    const count = (of: readonly { kind: Kind }[], kind: Kind) =>
      of.filter((call) => call.kind === kind).length;
    const share = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(0)} %`;
    rows.push(
      `| ${name} | ${calls.length} | ${ms(quantile(sorted, 0.5))} / ${ms(p99)} | ` +
        `${KINDS.map((kind) => share(count(slow, kind), slow.length)).join(' / ')} | ` +
        `${KINDS.map((kind) => ms(quantile(sortedOf(kind), 0.99))).join(' / ')} | ` +
        `${KINDS.map((kind) => share(count(measured, kind), calls.length)).join(' / ')} |`,
    );
  }
  return rows.join('\n');
}

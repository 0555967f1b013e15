/**
 * A real Prometheus for the dashboard and alert tests: Debian's `prometheus` package (`/usr/bin/prometheus`,
 * `/usr/bin/promtool`; `PROMETHEUS` / `PROMTOOL` name other binaries). It runs as a child process on 127.0.0.1 with
 * a temporary configuration and TSDB, scraping the targets it is given every second and evaluating rule files.
 * Its HTTP API is documented at https://prometheus.io/docs/prometheus/latest/querying/api/.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { waitFor } from '../../core/src/testing/wait.ts';

const binary = (variable: string, fallback: string) => process.env[variable] ?? fallback;
const PROMETHEUS = binary('PROMETHEUS', '/usr/bin/prometheus');
const PROMTOOL = binary('PROMTOOL', '/usr/bin/promtool');

/** Why the Prometheus checks cannot run here, or undefined when both binaries are present. */
export function prometheusMissing(): string | undefined {
  for (const path of [PROMETHEUS, PROMTOOL]) {
    try {
      accessSync(path, constants.X_OK);
    } catch {
      return `${path} is missing (apt-get install prometheus, or set PROMETHEUS and PROMTOOL)`;
    }
  }
  return undefined;
}

/** Runs promtool; resolves with its exit code and everything it printed (its error messages go to stderr). */
export function promtool(args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(PROMTOOL, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** One scrape job: its name and the labels a Kubernetes service discovery would have attached. */
export interface ScrapeTarget {
  readonly job: string;
  /** host:port serving /metrics. */
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** One answer of /api/v1/query: the series, or Prometheus' own error for a query it rejects. */
export type QueryResult =
  | { readonly ok: true; readonly series: readonly { metric: Record<string, string>; value: number }[] }
  | { readonly ok: false; readonly error: string };

export interface RuleHealth {
  readonly name: string;
  readonly health: 'ok' | 'err' | 'unknown';
  readonly lastError?: string;
}

export interface RunningPrometheus {
  readonly url: string;
  /** An instant query at the current time. */
  query(expr: string): Promise<QueryResult>;
  /** The value of a query that answers one series, or undefined while it answers none. */
  scalar(expr: string): Promise<number | undefined>;
  /** Values of a label across the series a selector matches (what Grafana's `label_values` asks). */
  labelValues(label: string, match: string): Promise<string[]>;
  /** Every loaded alerting and recording rule with the health of its last evaluation. */
  rules(): Promise<RuleHealth[]>;
  /** Kills the process (SIGKILL after 5 s) and removes its configuration and TSDB. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Starts Prometheus scraping `targets` every second with `ruleFiles` loaded; resolves once it is ready. */
export async function startPrometheus(options: {
  targets: readonly ScrapeTarget[];
  ruleFiles: readonly string[];
}): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'turnpike-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles,
    scrape_configs: options.targets.map((target) => ({
      job_name: target.job,
      static_configs: [{ targets: [target.address], labels: target.labels }],
    })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = `${log}${chunk.toString('utf8')}`.slice(-8000);
  });
  const close = async () => {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  };

  const api = async (path: string) => {
    const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
    return (await response.json()) as { status: string; data?: unknown; error?: string };
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${log}`);
      const ready = await fetch(`${url}/-/ready`).catch(() => undefined);
      return ready?.ok ? true : undefined;
    }, 20_000);
  } catch (error) {
    await close();
    throw new Error(`prometheus did not become ready: ${(error as Error).message}\n${log}`);
  }

  const query = async (expr: string): Promise<QueryResult> => {
    const body = await api(`/api/v1/query?query=${encodeURIComponent(expr)}`);
    if (body.status !== 'success') return { ok: false, error: body.error ?? JSON.stringify(body) };
    const data = body.data as { resultType: string; result: unknown };
    if (data.resultType === 'scalar') {
      const [, value] = data.result as [number, string];
      return { ok: true, series: [{ metric: {}, value: Number(value) }] };
    }
    const vector = data.result as { metric: Record<string, string>; value: [number, string] }[];
    return { ok: true, series: vector.map((s) => ({ metric: s.metric, value: Number(s.value[1]) })) };
  };
  return {
    url,
    query,
    async scalar(expr) {
      const result = await query(expr);
      if (!result.ok) throw new Error(`${expr}: ${result.error}`);
      return result.series.length === 1 ? result.series[0]?.value : undefined;
    },
    async labelValues(label, match) {
      const body = await api(`/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`);
      return (body.data as string[] | undefined) ?? [];
    },
    async rules() {
      const body = await api('/api/v1/rules');
      const groups = (body.data as { groups: { rules: RuleHealth[] }[] }).groups;
      return groups.flatMap((group) =>
        group.rules.map(({ name, health, lastError }) => ({ name, health, lastError })),
      );
    },
    close,
  };
}

/**
 * The database away while the operator reconciles: its connection goes through a TCP proxy of the test's own
 * (the shared Postgres keeps running). A reconcile that cannot reach the database says so in the resource's
 * conditions (`DatabaseUnavailable`) and a metric, is retried with backoff, and applies once the database is back.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@turnpike/core/testing/free-port';
import { startTcpProxy, type TcpProxy } from '@turnpike/core/testing/tcp-proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigFor } from './kube/client.ts';
import type { Operator } from './operator.ts';
import { createHarness, type Harness } from './testing/operator-harness.ts';
import { waitFor } from './testing/wait.ts';

const NS = 'team-outage';
const T = { group: 'turnpike.dev', version: 'v1alpha1' } as const;

describe.skipIf(!process.env.TEST_POSTGRES_URL)('the operator while the database is unreachable', () => {
  let h: Harness;
  let proxy: TcpProxy;
  let operator: Operator;

  beforeAll(async () => {
    h = await createHarness();
    proxy = await startTcpProxy(h.databaseUrl as string);
    operator = await h.startOperator({ databaseUrl: proxy.urlThrough(h.databaseUrl as string) });
    await waitFor(() => operator.isLeader(), { what: 'leadership' });
  });
  afterAll(async () => {
    await proxy?.close();
    await h?.close();
  });

  const ready = (name: string) =>
    (
      h.api.get({ ...T, plural: 'modelprices', namespace: NS, name }) as
        | { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }
        | undefined
    )?.status?.conditions?.find((c) => c.type === 'Ready');
  const unavailableCount = async () => {
    const text = await operator.metrics.registry.metrics();
    const match = text.match(/^turnpike_operator_database_unavailable_total\{kind="ModelPrice"\} (\d+)/m);
    return Number(match?.[1] ?? 0);
  };

  it('reports DatabaseUnavailable in the conditions and a metric, retries with backoff, and applies once it is back', async () => {
    await proxy.refuse();
    proxy.resetAll();
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name: 'outage-price', namespace: NS },
      spec: { models: ['outage-model'], price: { input: '2.5', output: '10' } },
    });
    await waitFor(() => ready('outage-price')?.reason === 'DatabaseUnavailable', {
      what: 'DatabaseUnavailable condition',
      timeoutMs: 20_000,
    });
    expect(ready('outage-price')).toMatchObject({
      status: 'False',
      message: 'the database is unreachable; retrying with backoff',
    });
    // Retried, not given up on: the count grows while the database stays away.
    const first = await unavailableCount();
    expect(first).toBeGreaterThan(0);
    await waitFor(async () => (await unavailableCount()) > first, { what: 'a retry', timeoutMs: 20_000 });
    expect(h.api.events(NS).some((e) => (e as { reason?: string }).reason === 'DatabaseUnavailable')).toBe(
      true,
    );

    await proxy.restore();
    await waitFor(() => ready('outage-price')?.status === 'True', {
      what: 'applied after',
      timeoutMs: 70_000,
    });
  }, 120_000);

  it('a process started while the database is unreachable waits, live and not ready, then leads', async () => {
    const url = h.databaseUrl as string;
    const own = await startTcpProxy(url);
    const dir = await mkdtemp(path.join(tmpdir(), 'turnpike-operator-boot-'));
    const kubeconfig = path.join(dir, 'kubeconfig.json');
    await writeFile(kubeconfig, kubeConfigFor(h.api.url).exportConfig());
    const port = await freePort();
    await own.refuse();
    const child = spawn(process.execPath, [fileURLToPath(new URL('./main.ts', import.meta.url))], {
      env: {
        ...process.env,
        DATABASE_URL: own.urlThrough(url),
        CRYPTO_SECRET: 'test-crypto-secret-0123456789',
        KUBECONFIG: kubeconfig,
        OPERATOR_PORT: String(port),
        OPERATOR_LEASE_NAME: 'boot-test',
        POD_NAMESPACE: 'turnpike-system',
        LOG_LEVEL: 'warn',
        DATA_DIR: dir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    let exitCode: number | null | undefined;
    child.once('exit', (code) => {
      exitCode = code;
    });
    const status = (route: string) =>
      fetch(`http://127.0.0.1:${port}${route}`).then(
        (r) => r.status,
        () => 0,
      );
    try {
      await waitFor(async () => (await status('/healthz')) === 200, { what: 'live', timeoutMs: 20_000 });
      expect(await status('/readyz')).toBe(503);
      await waitFor(() => output.includes('waiting for it'), { what: 'the wait logged' });
      expect(exitCode).toBeUndefined();
      await own.restore();
      await waitFor(async () => (await status('/readyz')) === 200, {
        what: `ready\n${output}`,
        timeoutMs: 30_000,
      });
      expect(exitCode).toBeUndefined();
    } finally {
      child.kill('SIGKILL');
      await own.close();
    }
  }, 60_000);
});

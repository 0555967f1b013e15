/**
 * Cold start: 1,000 Channels and 5,000 ModelPrices already in the API server when the operator starts must all
 * be Ready within 60 s, with the operator's RSS at most 256 MiB. With TEST_POSTGRES_URL the operator runs as its
 * own process (`node operator/src/main.ts`, as the chart starts it), so its peak RSS (VmHWM) is its own; on PGlite
 * it runs in this process, the RSS printed is the whole test process's, and the budgets are not asserted (the
 * stand-in, the embedded database and the operator share one event loop there).
 * The child runs with the chart's NODE_OPTIONS (a 128 MiB old space): without them V8 lets the heap grow far past
 * what the operator keeps alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { channels } from '@turnpike/core/db/schema/channels';
import { optionSources } from '@turnpike/core/db/schema/option-sources';
import { options as optionsTable } from '@turnpike/core/db/schema/options';
import { PRICE_OPTION_KEYS } from '@turnpike/core/options/managed-options';
import { count, inArray, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './testing/operator-harness.ts';
import { waitFor } from './testing/wait.ts';

const CHANNELS = 1_000;
const PRICES = 5_000;
const SECRETS = 10;
const BUDGET_MS = 60_000;
const RSS_BUDGET_MIB = 256;
/** What the operator container runs with (NODE_OPTIONS), see README "Manage channels and prices with kubectl". */
const OPERATOR_NODE_OPTIONS = '--max-old-space-size=128 --max-semi-space-size=4';

let h: Harness;
let child: ChildProcess | undefined;

beforeAll(async () => {
  h = await createHarness();
  for (let i = 0; i < SECRETS; i++)
    h.api.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `key-${i}`, namespace: `ns-${i}`, labels: { 'turnpike.dev/credential': 'true' } },
      stringData: { apiKey: `sk-cold-${i}` },
    });
  for (let i = 0; i < CHANNELS; i++)
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'Channel',
      metadata: { name: `ch-${i}`, namespace: `ns-${i % SECRETS}` },
      spec: {
        type: 'openai',
        keySecretRef: { name: `key-${i % SECRETS}` },
        models: [`model-${i}`, `model-${i}-mini`],
        priority: i % 5,
      },
    });
  for (let i = 0; i < PRICES; i++)
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name: `price-${i}`, namespace: `ns-${i % SECRETS}` },
      spec: { models: [`priced-${i}`], price: { input: `${(i % 50) + 1}.5`, output: `${(i % 50) + 2}` } },
    });
}, 120_000);
afterAll(async () => {
  // SIGTERM is what Kubernetes sends: the operator stops, releases its Lease and exits.
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  await h?.close();
});

function countReady(): number {
  let ready = 0;
  for (const plural of ['channels', 'modelprices'])
    for (const o of h.api.list({ group: 'turnpike.dev', version: 'v1alpha1', plural }) as unknown as {
      metadata: { generation: number };
      status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
    }[])
      if (
        o.status?.observedGeneration === o.metadata.generation &&
        o.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
      )
        ready += 1;
  return ready;
}

/** Peak resident set of a process, in MiB (Linux VmHWM). */
const peakRssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024;
};

describe('cold start', () => {
  it(`reconciles ${CHANNELS} Channels and ${PRICES} ModelPrices within ${BUDGET_MS / 1000} s and ${RSS_BUDGET_MIB} MiB`, async () => {
    const started = Date.now();
    let rssMiB: number;
    let mode: string;
    if (h.config.databaseUrl) {
      mode = 'own process (node operator/src/main.ts)';
      const kubeconfig = path.join(os.tmpdir(), `turnpike-kubeconfig-${process.pid}.yaml`);
      writeFileSync(
        kubeconfig,
        `apiVersion: v1\nkind: Config\nclusters:\n- name: stand-in\n  cluster:\n    server: ${h.api.url}\n    insecure-skip-tls-verify: true\nusers:\n- name: operator\n  user:\n    token: test\ncontexts:\n- name: stand-in\n  context: {cluster: stand-in, user: operator}\ncurrent-context: stand-in\n`,
      );
      child = spawn(process.execPath, [path.join(import.meta.dirname, 'main.ts')], {
        env: {
          PATH: process.env.PATH,
          KUBECONFIG: kubeconfig,
          DATABASE_URL: h.config.databaseUrl,
          ...(h.config.redisUrl ? { REDIS_URL: h.config.redisUrl } : {}),
          REDIS_KEY_PREFIX: h.prefix,
          CRYPTO_SECRET: h.config.cryptoSecret,
          SESSION_SECRET: h.config.sessionSecret,
          OPERATOR_PORT: '0',
          POD_NAME: 'cold-start',
          POD_NAMESPACE: 'turnpike-system',
          LOG_LEVEL: process.env.OPERATOR_TEST_LOG ?? 'warn',
          // The heap settings the chart gives the operator (README): V8 otherwise grows its heap far past the
          // live set (measured: 474 MiB peak without them, 212 MiB with them, same time).
          NODE_OPTIONS: process.env.OPERATOR_NODE_OPTIONS ?? OPERATOR_NODE_OPTIONS,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const pid = child.pid as number;
      const progress = setInterval(
        () =>
          console.info(`cold start progress ${countReady()} ready after ${(Date.now() - started) / 1000} s`),
        5_000,
      );
      child.on('exit', () => clearInterval(progress));
      await waitFor(() => countReady() === CHANNELS + PRICES, {
        timeoutMs: 2 * BUDGET_MS,
        intervalMs: 250,
        what: 'all Ready',
      });
      rssMiB = peakRssMiB(pid);
    } else {
      mode = 'in the test process (PGlite)';
      const operator = await h.startOperator();
      await waitFor(() => countReady() === CHANNELS + PRICES, {
        timeoutMs: 2 * BUDGET_MS,
        intervalMs: 250,
        what: 'all Ready',
      });
      expect(operator.isLeader()).toBe(true);
      rssMiB = process.resourceUsage().maxRSS / 1024;
    }
    const seconds = (Date.now() - started) / 1000;
    const [channelRows] = await h.database.db
      .select({ n: count() })
      .from(channels)
      .where(isNotNull(channels.sourceKind));
    const [priceRows] = await h.database.db
      .select({ n: count() })
      .from(optionSources)
      .where(isNotNull(optionSources.value));
    // Each price is a row of its own; the price maps' option rows stay the console's (none here).
    const mapRows = await h.database.db
      .select()
      .from(optionsTable)
      .where(inArray(optionsTable.key, [...PRICE_OPTION_KEYS]));
    console.info(
      `operator cold start ${JSON.stringify({ mode, channels: CHANNELS, prices: PRICES, seconds, peakRssMiB: Math.round(rssMiB) })}`,
    );
    expect(channelRows?.n).toBe(CHANNELS);
    expect(priceRows?.n).toBe(PRICES * 2); // ModelRatio and CompletionRatio per model
    expect(mapRows).toEqual([]);
    // The budgets hold for the deployable setup: the operator as its own process on PostgreSQL. On PGlite the
    // stand-in, the embedded database and the operator share one event loop, so only correctness is checked.
    if (h.config.databaseUrl) {
      expect(seconds).toBeLessThanOrEqual(BUDGET_MS / 1000);
      expect(rssMiB).toBeLessThanOrEqual(RSS_BUDGET_MIB);
    }
  }, 180_000);
});

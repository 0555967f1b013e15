/**
 * Batch money on a real cluster (one ROLE=api process, two ROLE=relay processes, Postgres and a Redis of its own):
 * batches created at once through both relays, one relay SIGKILLed while they run, the upstream finishing them
 * afterwards. The surviving relay's poller takes the lease over and settles every batch once: the served lines ×
 * the batch price = the balance drop = the consume logs, every hold's rest given back, nothing billed twice.
 */
import { createDb, type Database } from '@turnpike/core/db/client';
import { batches, logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hasRedisServer } from '@turnpike/core/testing/redis-server';
import { type FakeBatchUpstream, startFakeBatchUpstream } from '@turnpike/relay/testing/fake-batch-upstream';
import { and, eq, inArray } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, consoleApi, signInAsRoot, startCluster } from './testing/cluster.ts';
import { createTestDatabaseUrl, ROOT } from './testing/test-app.ts';

const enabled = Boolean(process.env.TEST_POSTGRES_URL) && hasRedisServer();
const START = 10_000_000;
// openai.com/api/pricing, gpt-4o-mini: Batch API $0.075 input / $0.30 output per 1M tokens.
// A line of 8 prompt and 1000 completion tokens: (8 × 0.075 + 1000 × 0.30) / 1M USD = 150 quota.
const LINE = Math.round(((8 * 0.075 + 1000 * 0.3) / 1e6) * 500_000);

async function until<T>(read: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(!enabled)('batches on a cluster with a relay killed mid-batch', () => {
  let cluster: Cluster;
  let upstream: FakeBatchUpstream;
  let database: Database;
  let dropDatabase: () => Promise<void>;
  let admin: Record<string, string>;
  const api = consoleApi(
    () => cluster.api.url,
    () => admin,
  );

  beforeAll(async () => {
    const created = await createTestDatabaseUrl();
    dropDatabase = created.drop;
    upstream = await startFakeBatchUpstream({
      kind: 'openai',
      key: 'sk-up',
      usageOf: () => ({ input: 8, output: 1000 }),
    });
    cluster = await startCluster({
      databaseUrl: created.url as string,
      relays: 2,
      env: { SYNC_FREQUENCY: '3600' },
    });
    database = await createDb({ url: created.url });
    admin = await signInAsRoot(cluster.api.url, ROOT);
    await api('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 0.075 }) });
    await api('PUT', '/api/option/', { key: 'CompletionRatio', value: JSON.stringify({ 'gpt-4o-mini': 4 }) });
    await api('POST', '/api/channel/', {
      name: 'batch upstream',
      type: 1,
      key: 'sk-up',
      base_url: upstream.url,
      models: 'gpt-4o-mini',
      group: 'default',
    });
  }, 240_000);

  afterAll(async () => {
    await database?.close();
    await cluster?.close();
    await upstream?.close();
    await dropDatabase?.();
  }, 60_000);

  it('settles every batch once after the relay that took them is killed', async () => {
    const user = await createUserRepo(database.db).insert({
      username: `batch-cluster-${Math.random().toString(36).slice(2, 8)}`,
      password: 'not-a-real-hash',
      quota: START,
    });
    const token = await createTokenRepo(database.db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'cluster',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    const clients = cluster.relays.map(
      (relay) => new OpenAI({ apiKey: `sk-${token.key}`, baseURL: `${relay.url}/v1`, maxRetries: 0 }),
    );
    const lines = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({
          custom_id: `${tag}-${i}`,
          method: 'POST',
          url: '/v1/chat/completions',
          body: {
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: `question ${i}` }],
            max_tokens: 1000,
          },
        }),
      ).join('\n');
    // Six batches of three lines, created at once, half through each relay.
    const created = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const client = clients[i % 2] as OpenAI;
        const file = await client.files.create({
          file: await toFile(Buffer.from(lines(3, `b${i}`)), 'in.jsonl'),
          purpose: 'batch',
        });
        return client.batches.create({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
      }),
    );
    const ids = created.map((batch) => batch.id);
    const rows = await database.db.select().from(batches).where(inArray(batches.id, ids));
    const held = rows.reduce((sum, row) => sum + row.held, 0);
    const [afterCreate] = await database.db.select().from(users).where(eq(users.id, user.id));
    expect(afterCreate?.quota).toBe(START - held);

    await cluster.relays[0]?.signal('SIGKILL');
    for (const row of rows) upstream.complete(row.upstreamId);
    // The survivor's poller gets the lease (at once, or when the dead relay's runs out) and ends every batch.
    const settled = await until(async () => {
      const now = await database.db.select().from(batches).where(inArray(batches.id, ids));
      return now.every((row) => row.settledAt > 0) ? now : undefined;
    }, 150_000);
    expect(settled.every((row) => row.status === 'completed' && row.completed === 3)).toBe(true);
    // And a client reading them on the survivor sees them done.
    const survivor = clients[1] as OpenAI;
    const read = await Promise.all(ids.map((id) => survivor.batches.retrieve(id)));
    expect(read.every((batch) => batch.status === 'completed' && batch.output_file_id)).toBe(true);

    const served = 6 * 3;
    const [account] = await database.db.select().from(users).where(eq(users.id, user.id));
    const billed = await database.db
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.id), eq(logs.type, LogType.Consume)));
    expect(billed).toHaveLength(served);
    expect(billed.reduce((sum, log) => sum + log.quota, 0)).toBe(served * LINE);
    expect(account?.quota).toBe(START - served * LINE);
    expect(account?.usedQuota).toBe(served * LINE);
    expect(settled.reduce((sum, row) => sum + (row.held - row.charged), 0)).toBe(held - served * LINE);
  }, 300_000);
});

/**
 * Files kept in an S3-compatible object store (a real s3rver started here) instead of the database, through the same
 * `@aws-sdk/client-s3` calls production makes; on PGlite by default and on Postgres when TEST_POSTGRES_URL is set.
 * The objects are read back with an S3 client of the test's own, so what the gateway stored is checked at the store.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { batches, fileContents, files } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBatchUpstream, startFakeBatchUpstream } from '../testing/fake-batch-upstream.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { startS3Server, type TestS3Server } from '../testing/s3-server.ts';

let t: RelayTestApp;
let s3: TestS3Server;
let upstream: FakeBatchUpstream;
let client: OpenAI;
let bucketClient: S3Client;

async function objectText(key: string): Promise<string | undefined> {
  try {
    const answer = await bucketClient.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    return await answer.Body?.transformToString();
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
    throw err;
  }
}

beforeAll(async () => {
  s3 = await startS3Server();
  bucketClient = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  t = await createRelayTestApp({ env: s3.env });
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 0.075 }));
  upstream = await startFakeBatchUpstream({
    kind: 'openai',
    key: 'sk-up',
    usageOf: () => ({ input: 5, output: 10 }),
  });
  await t.seedChannel({ type: 1, key: 'sk-up', baseUrl: upstream.url, models: 'gpt-4o-mini' });
  const relay = await t.startRelay();
  const baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
  const user = await t.seedUser({ quota: 1_000_000 });
  const token = await t.seedToken(user.id);
  client = new OpenAI({ apiKey: `sk-${token.key}`, baseURL, maxRetries: 0 });
}, 300_000);

afterAll(async () => {
  await t?.close();
  await upstream?.close();
  bucketClient?.destroy();
  await s3?.close();
});

describe('files in an S3-compatible object store', () => {
  it('keeps an upload as the object files/<id>, serves it back from there, and deletes it there', async () => {
    const content = '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}\n';
    const file = await client.files.create({
      file: await toFile(Buffer.from(content), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    expect(await objectText(`files/${file.id}`)).toBe(content);
    const db = t.runtime.deps.db;
    expect(await db.select().from(fileContents).where(eq(fileContents.fileId, file.id))).toEqual([]);
    expect((await db.select().from(files).where(eq(files.id, file.id)))[0]?.storage).toBe('s3');
    expect(await (await client.files.content(file.id)).text()).toBe(content);
    await client.files.delete(file.id);
    expect(await objectText(`files/${file.id}`)).toBeUndefined();
  });

  it("keeps a batch's input and output files there too", async () => {
    const line = JSON.stringify({
      custom_id: 'one',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }], max_tokens: 20 },
    });
    const input = await client.files.create({
      file: await toFile(Buffer.from(`${line}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const [row] = await t.runtime.deps.db.select().from(batches).where(eq(batches.id, batch.id));
    upstream.complete(row?.upstreamId ?? '');
    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    const stored = await objectText(`files/${done.output_file_id}`);
    expect(JSON.parse(stored ?? '{}')).toMatchObject({ custom_id: 'one', response: { status_code: 200 } });
    expect(await (await client.files.content(done.output_file_id ?? '')).text()).toBe(stored);
  });
});

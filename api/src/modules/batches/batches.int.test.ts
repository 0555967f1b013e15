import { batches, fileContents, files } from '@turnpike/core/db/schema/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('the batches page', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let ann: ConsoleClient;
  let bob: ConsoleClient;

  const batch = (id: string, userId: number, fields: Partial<typeof batches.$inferInsert> = {}) => ({
    id,
    userId,
    tokenId: 1,
    channelId: 7,
    mode: 'openai',
    model: 'gpt-4o-mini',
    endpoint: '/v1/chat/completions',
    status: 'completed',
    inputFileId: `file-in-${id}`,
    total: 3,
    completed: 2,
    failed: 1,
    held: 900,
    charged: 300,
    pricing: {},
    username: 'x',
    createdAt: 1_767_000_000,
    expiresAt: 1_767_086_400,
    settledAt: 1_767_000_100,
    completedAt: 1_767_000_100,
    outputFileId: `file-out-${id}`,
    ...fields,
  });

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    ann = await registerUser(t.app, 'ann');
    bob = await registerUser(t.app, 'bob');
    const db = t.runtime.deps.db;
    await db.insert(batches).values([
      batch('batch_ann_1', ann.userId!),
      batch('batch_ann_2', ann.userId!, {
        status: 'in_progress',
        createdAt: 1_767_000_500,
        settledAt: 0,
        charged: 0,
        completedAt: null,
        outputFileId: null,
      }),
      batch('batch_bob_1', bob.userId!),
    ]);
    await db.insert(files).values({
      id: 'file-out-batch_ann_1',
      userId: ann.userId!,
      purpose: 'batch_output',
      filename: 'batch_ann_1_output.jsonl',
      bytes: 5,
      createdAt: 1_767_000_100,
      storage: 'database',
    });
    await db
      .insert(fileContents)
      .values({ fileId: 'file-out-batch_ann_1', content: Buffer.from('{}\n{}\n') });
  }, 300_000);

  afterAll(async () => {
    await t?.close();
  });

  it('shows a user their own batches, newest first, with counts and cost, without the channel', async () => {
    const response = await ann.get('/api/batch/self?p=0');
    expect(response.statusCode).toBe(200);
    const rows = response.json().data;
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['batch_ann_2', 'batch_ann_1']);
    expect(rows[1]).toMatchObject({
      status: 'completed',
      total: 3,
      completed: 2,
      failed: 1,
      cost: 300,
      held: 900,
      settled: true,
    });
    expect(rows.every((r: object) => !('channel_id' in r))).toBe(true);
    expect(
      (await ann.get('/api/batch/self?status=in_progress')).json().data.map((r: { id: string }) => r.id),
    ).toEqual(['batch_ann_2']);
  });

  it('shows administrators every batch with its channel, and refuses users the admin list', async () => {
    const rows = (await root.get('/api/batch/?p=0')).json().data;
    expect(rows.map((r: { id: string }) => r.id).sort()).toEqual([
      'batch_ann_1',
      'batch_ann_2',
      'batch_bob_1',
    ]);
    expect(rows[0]).toHaveProperty('channel_id', 7);
    expect((await ann.get('/api/batch/')).statusCode).toBe(403);
  });

  it('downloads the output file for its owner and administrators, and a 404 for anyone else', async () => {
    const own = await ann.get('/api/batch/self/file/file-out-batch_ann_1');
    expect(own.statusCode).toBe(200);
    expect(own.body).toBe('{}\n{}\n');
    expect(own.headers['content-disposition']).toBe('attachment; filename="batch_ann_1_output.jsonl"');
    expect((await root.get('/api/batch/file/file-out-batch_ann_1')).body).toBe('{}\n{}\n');
    expect((await bob.get('/api/batch/self/file/file-out-batch_ann_1')).statusCode).toBe(404);
  });
});

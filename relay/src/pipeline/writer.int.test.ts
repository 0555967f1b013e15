import { createTestApp, type TestApp } from '@turnpike/api/testing/test-app';
import { logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchWriter } from './writer.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('batch writer', () => {
  it('aggregates counters and logs, and writes them all on close', async () => {
    const { db } = t.runtime.deps;
    const user = await createUserRepo(db).insert({ username: 'writer-user', password: 'x', quota: 100 });
    // An interval far beyond the test: only close() can write.
    const writer = createBatchWriter({ db, intervalMs: 3_600_000 });
    for (let i = 0; i < 5; i += 1) {
      writer.add({
        userId: user.id,
        tokenId: 0,
        channelId: 0,
        quota: 10,
        countRequest: true,
        log: {
          userId: user.id,
          createdAt: Math.floor(Date.now() / 1000),
          type: LogType.Consume,
          quota: 10,
          requestId: `writer-test-${i}`,
        },
      });
    }
    // An empty answer: logged, but neither charged nor counted.
    writer.add({ userId: user.id, tokenId: 0, channelId: 0, quota: 0, countRequest: false, log: undefined });
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toEqual([]);
    await writer.close();
    const [row] = await db.select().from(users).where(eq(users.id, user.id));
    expect(row).toMatchObject({ usedQuota: 50, requestCount: 5, quota: 100 });
    expect(await db.select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(5);
  });
});

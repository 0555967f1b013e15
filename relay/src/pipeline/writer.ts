/**
 * The batching writer (STYLE "Hot path"): consume logs and the used-quota / request-count counters of users,
 * tokens and channels are aggregated in memory and written every `intervalMs` in one transaction, and on close
 * (graceful shutdown flushes them). A failed flush keeps its data for the next one, so nothing is lost while the
 * database is briefly away. Balances are not written here: see billing.ts.
 */
import type { Db } from '@turnpike/core/db/client';
import { channels, logs, type NewLog, tokens, users } from '@turnpike/core/db/schema/index';
import { eq, sql } from 'drizzle-orm';

export interface UsageWrite {
  readonly userId: number;
  readonly tokenId: number;
  readonly channelId: number;
  readonly quota: number;
  /** False for an empty answer: nothing charged, not counted (reference §5.4). */
  readonly countRequest: boolean;
  readonly log: NewLog | undefined;
}

export interface BatchWriter {
  add(write: UsageWrite): void;
  flush(): Promise<void>;
  /** Stops the timer and flushes what is left. */
  close(): Promise<void>;
}

interface Counter {
  quota: number;
  requests: number;
}

export function createBatchWriter(options: {
  db: Db;
  intervalMs: number;
  onError?: (error: unknown) => void;
}): BatchWriter {
  const onError = options.onError ?? (() => {});
  let pendingLogs: NewLog[] = [];
  let userCounts = new Map<number, Counter>();
  let tokenCounts = new Map<number, number>();
  let channelCounts = new Map<number, number>();
  let flushing: Promise<void> | undefined;

  const bump = (map: Map<number, Counter>, id: number, quota: number, requests: number) => {
    const counter = map.get(id) ?? { quota: 0, requests: 0 };
    counter.quota += quota;
    counter.requests += requests;
    map.set(id, counter);
  };
  const add = (map: Map<number, number>, id: number, quota: number) =>
    map.set(id, (map.get(id) ?? 0) + quota);

  async function flushNow(): Promise<void> {
    if (
      pendingLogs.length === 0 &&
      userCounts.size === 0 &&
      tokenCounts.size === 0 &&
      channelCounts.size === 0
    )
      return;
    const batch = { logs: pendingLogs, users: userCounts, tokens: tokenCounts, channels: channelCounts };
    pendingLogs = [];
    userCounts = new Map();
    tokenCounts = new Map();
    channelCounts = new Map();
    try {
      await options.db.transaction(async (tx) => {
        for (let i = 0; i < batch.logs.length; i += 200)
          await tx.insert(logs).values(batch.logs.slice(i, i + 200));
        for (const [id, c] of batch.users) {
          await tx
            .update(users)
            .set({
              usedQuota: sql`${users.usedQuota} + ${c.quota}`,
              requestCount: sql`${users.requestCount} + ${c.requests}`,
            })
            .where(eq(users.id, id));
        }
        for (const [id, quota] of batch.tokens) {
          await tx
            .update(tokens)
            .set({
              usedQuota: sql`${tokens.usedQuota} + ${quota}`,
              accessedTime: Math.floor(Date.now() / 1000),
            })
            .where(eq(tokens.id, id));
        }
        for (const [id, quota] of batch.channels) {
          await tx
            .update(channels)
            .set({ usedQuota: sql`${channels.usedQuota} + ${quota}` })
            .where(eq(channels.id, id));
        }
      });
    } catch (error) {
      // Put the batch back in front of what arrived meanwhile; the next flush retries it.
      pendingLogs = [...batch.logs, ...pendingLogs];
      for (const [id, c] of batch.users) bump(userCounts, id, c.quota, c.requests);
      for (const [id, q] of batch.tokens) add(tokenCounts, id, q);
      for (const [id, q] of batch.channels) add(channelCounts, id, q);
      throw error;
    }
  }

  function flush(): Promise<void> {
    const previous = flushing ?? Promise.resolve();
    const next = previous.then(flushNow, flushNow);
    flushing = next.finally(() => {
      if (flushing === next) flushing = undefined;
    });
    return next;
  }

  const timer = setInterval(() => flush().catch(onError), options.intervalMs);
  timer.unref();

  return {
    add(write) {
      if (write.log) pendingLogs.push(write.log);
      if (write.countRequest) {
        bump(userCounts, write.userId, write.quota, 1);
        if (write.tokenId > 0) add(tokenCounts, write.tokenId, write.quota);
        if (write.channelId > 0) add(channelCounts, write.channelId, write.quota);
      }
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

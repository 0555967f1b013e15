import type { Redis } from 'ioredis';
import type { Db } from '../db/client.ts';
import type { EventBus } from '../events/bus.ts';
import { createRedisClient } from '../kv/redis-client.ts';
import { createBaseLoader, createMemoryLedger, type Ledger, tokenAccount, userAccount } from './ledger.ts';
import { createRedisLedger, LEDGER_JOURNAL_COMMAND } from './redis-ledger.ts';

export interface OpenLedgerOptions {
  readonly db: Db;
  readonly bus: EventBus;
  /** With it, every process shares one ledger in Redis; without it, this process keeps its own. */
  readonly redisUrl: string | undefined;
  readonly keyPrefix: string;
  readonly onError?: (error: unknown) => void;
  readonly onDegraded?: (degraded: boolean) => void;
}

/**
 * A connection that fails fast while Redis is away: no offline queue, a short command timeout, no retries. Commands
 * issued in the same tick go out in one write (auto-pipelining): the holds of the calls a tick admits share a system
 * call, and those writes were a sixth of the relay's CPU under load (docs/adr/0052). A journal entry is written at
 * once, as before: it is on its way to Redis before the call's answer is (the answer is sent in the same tick).
 */
export async function connectLedgerRedis(url: string): Promise<Redis> {
  const redis = createRedisClient(url, {
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: [LEDGER_JOURNAL_COMMAND],
    lazyConnect: true,
    enableOfflineQueue: false,
    commandTimeout: 1_000,
    maxRetriesPerRequest: 0,
  });
  redis.on('error', () => {});
  await redis.connect().catch(() => undefined);
  return redis;
}

/**
 * The ledger of a relay process (docs/adr/0016): in Redis when configured, on a connection of its own that fails
 * fast (no offline queue, a short command timeout) so an unreachable Redis degrades admission instead of stalling
 * it; in memory otherwise. Bases are read again after the console changes a user or a token.
 */
export async function openLedger(options: OpenLedgerOptions): Promise<Ledger> {
  const loadBases = createBaseLoader(options.db);
  let ledger: Ledger;
  let disconnect = () => {};
  if (options.redisUrl) {
    const redis = await connectLedgerRedis(options.redisUrl);
    const shared = createRedisLedger({
      redis,
      keyPrefix: options.keyPrefix,
      loadBases,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.onDegraded ? { onDegraded: options.onDegraded } : {}),
    });
    await shared.start();
    ledger = shared;
    disconnect = () => redis.disconnect();
  } else {
    ledger = createMemoryLedger({ loadBases });
  }
  const unsubscribe = options.bus.subscribe((event) => {
    if (event.type === 'users.changed') ledger.invalidate(event.ids.map(userAccount));
    else if (event.type === 'tokens.changed') ledger.invalidate(event.ids.map(tokenAccount));
  });
  return {
    ...ledger,
    async close() {
      unsubscribe();
      await ledger.close();
      disconnect();
    },
  };
}

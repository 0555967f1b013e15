/**
 * Where stored responses are kept (docs/adr/0051): written off the request path by a writer of their own (a queue
 * flushed on an interval and at shutdown, as content logs are), and read back from the newest first: this relay's
 * memory (what it answered lately, kept or still queued), Redis (what any relay answered in the last minutes, so a
 * chain continued on another relay before the write does not miss), then the database.
 *
 * An id an OpenAI channel issued and holds is also bound to that channel in an affinity store, for as long as
 * OpenAI keeps it, so the next turn goes back to it even when the gateway keeps nothing (`ResponsesRetentionDays`
 * 0). Every read is the user's own: another user's id is as unknown as an id never issued.
 */

import type { Db } from '@turnpike/core/db/client';
import type { NewStoredResponse, StoredResponse } from '@turnpike/core/db/schema/stored-responses';
import { createStoredResponseRepo } from '@turnpike/core/responses/stored-response.repo';
import type { Redis } from 'ioredis';
import {
  type AffinityStore,
  createMemoryAffinityStore,
  createRedisAffinityStore,
} from '../routing/affinity.ts';

/** A stored response as the relay keeps it: every column known. */
export type KeptResponse = Required<Omit<NewStoredResponse, 'previousResponseId'>> &
  Pick<StoredResponse, 'previousResponseId'>;

export interface ResponseStore {
  /** Keeps a response: in memory and Redis at once, in the database with the next flush. */
  keep(row: KeptResponse): void;
  /** Records that an OpenAI channel holds this id of the user's, for `ttlMs`. */
  bind(userId: number, id: string, channelId: number, ttlMs: number): void;
  /** The channel an id of the user's is bound to, if any. */
  boundChannel(userId: number, id: string): Promise<number | undefined>;
  /** The user's response by id, while it lasts. */
  find(userId: number, id: string): Promise<KeptResponse | undefined>;
  /** Deletes the user's response everywhere; answers whether there was one. */
  remove(userId: number, id: string): Promise<boolean>;
  /** The clock retention is counted by, in Unix seconds (tests move it). */
  nowSeconds(): number;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Stops the interval and writes what is left. */
  close(): Promise<void>;
}

/** How long a kept response stays in Redis for the other relays: well past any flush. */
const SHARED_TTL_MS = 10 * 60 * 1000;
/** Responses this relay keeps in memory at most (the newest), and their JSON's characters at most together. */
const MEMORY_ENTRIES = 2_000;
const MEMORY_CHARS = 64 * 1024 * 1024;
/** Responses waiting to be written at most; past it the oldest waiting are written at once. */
const MAX_QUEUED = 5_000;

/**
 * Whether a text can be a response id at all: visible ASCII, at most the column's width. Anything else (a NUL byte,
 * which the database refuses in text) is unknown without asking anyone.
 */
const isResponseId = (id: string): boolean => /^[\x21-\x7e]{1,128}$/.test(id);

export function createResponseStore(deps: {
  readonly db: Db;
  readonly redis: Redis | undefined;
  readonly redisKeyPrefix: string;
  readonly intervalMs?: number;
  readonly now?: () => number;
  readonly onError: (error: unknown, context: string) => void;
}): ResponseStore {
  const repo = createStoredResponseRepo(deps.db);
  const now = deps.now ?? Date.now;
  const nowSeconds = () => Math.floor(now() / 1000);
  const recent = new Map<string, { readonly row: KeptResponse; readonly size: number }>();
  let recentChars = 0;
  let queue: KeptResponse[] = [];
  let running: Promise<void> = Promise.resolve();
  const { redis } = deps;
  const sharedKey = (id: string) => `${deps.redisKeyPrefix}response:${id}`;
  const bindings: AffinityStore = redis
    ? createRedisAffinityStore(redis, `${deps.redisKeyPrefix}responses:`)
    : createMemoryAffinityStore(() => MEMORY_ENTRIES * 10, now);
  const bindingKey = (userId: number, id: string) => `${userId}:${id}`;

  const forget = (id: string) => {
    const entry = recent.get(id);
    if (!entry) return;
    recent.delete(id);
    recentChars -= entry.size;
  };
  /** Remembers a row (its JSON, when made already, gives its size); the oldest go past either bound. */
  const remember = (row: KeptResponse, json: string = JSON.stringify(row)) => {
    forget(row.id);
    // One response larger than the whole bound is read from the database instead.
    if (json.length > MEMORY_CHARS) return;
    recent.set(row.id, { row, size: json.length });
    recentChars += json.length;
    for (const oldest of recent.keys()) {
      if (recent.size <= MEMORY_ENTRIES && recentChars <= MEMORY_CHARS) break;
      forget(oldest);
    }
  };
  const isLive = (row: KeptResponse, userId: number) => row.userId === userId && row.expiresAt > nowSeconds();

  async function writeQueued(): Promise<void> {
    if (queue.length === 0) return;
    const taken = queue;
    queue = [];
    try {
      await repo.insertMany(taken);
    } catch {
      // One row the database refuses must not take the batch with it: each is tried on its own.
      for (const row of taken)
        await repo
          .insertMany([row])
          .catch((error: unknown) => deps.onError(error, 'stored response not written'));
    }
  }
  function flush(): Promise<void> {
    running = running.then(writeQueued, writeQueued);
    return running;
  }
  const timer = setInterval(() => void flush(), deps.intervalMs ?? 1_000);
  timer.unref();

  async function shared(id: string): Promise<KeptResponse | undefined> {
    if (!redis) return undefined;
    const text = await redis.get(sharedKey(id)).catch(() => null);
    return text ? (JSON.parse(text) as KeptResponse) : undefined;
  }

  return {
    keep(row) {
      const json = JSON.stringify(row);
      remember(row, json);
      queue.push(row);
      if (queue.length >= MAX_QUEUED) void flush();
      if (redis)
        void redis
          .set(sharedKey(row.id), json, 'PX', SHARED_TTL_MS)
          .catch((error: unknown) => deps.onError(error, 'stored response not shared'));
    },
    bind(userId, id, channelId, ttlMs) {
      void bindings
        .set(bindingKey(userId, id), { channelId }, ttlMs)
        .catch((error: unknown) => deps.onError(error, 'stored response not bound'));
    },
    async boundChannel(userId, id) {
      if (!isResponseId(id)) return undefined;
      const bound = await bindings.get(bindingKey(userId, id)).catch(() => undefined);
      return bound?.channelId;
    },
    async find(userId, id) {
      if (!isResponseId(id)) return undefined;
      const local = recent.get(id)?.row;
      if (local) return isLive(local, userId) ? local : undefined;
      const fromRedis = await shared(id);
      if (fromRedis) return isLive(fromRedis, userId) ? fromRedis : undefined;
      const row = await repo.find(userId, id, nowSeconds());
      if (row) remember(row);
      return row;
    },
    async remove(userId, id) {
      if (!isResponseId(id)) return false;
      const local = recent.get(id)?.row ?? (await shared(id));
      const isOwn = local !== undefined && isLive(local, userId);
      if (isOwn) {
        forget(id);
        queue = queue.filter((row) => row.id !== id);
        if (redis) await redis.del(sharedKey(id)).catch(() => undefined);
      }
      await bindings.delete(bindingKey(userId, id)).catch(() => undefined);
      // A write already under way lands first, so the delete below finds it.
      await running;
      const inDb = await repo.remove(userId, id);
      return isOwn || inDb;
    },
    nowSeconds,
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

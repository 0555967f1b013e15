import type { ResolvedConfig } from '@turnpike/core/config';
import type { DatabaseKind, Db } from '@turnpike/core/db/client';
import type { EventBus } from '@turnpike/core/events/bus';
import type { KvStore } from '@turnpike/core/kv/kv';
import type { OptionStore } from '@turnpike/core/options/store';
import type { Redis } from 'ioredis';

/** Everything the API needs from the outside world, built once by the server (or a test) and passed in. */
export interface AppDeps {
  readonly config: ResolvedConfig;
  readonly db: Db;
  readonly dbKind: DatabaseKind;
  readonly bus: EventBus;
  readonly options: OptionStore;
  readonly kv: KvStore;
  /** Present when REDIS_URL is set: shared rate-limit counters. */
  readonly redis?: Redis | undefined;
  readonly version: string;
  /** Unix seconds when this process started. */
  readonly startTime: number;
}

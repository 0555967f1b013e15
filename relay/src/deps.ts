import type { ResolvedConfig } from '@turnpike/core/config';
import type { Db } from '@turnpike/core/db/client';
import type { EventBus } from '@turnpike/core/events/bus';
import type { KvStore } from '@turnpike/core/kv/kv';
import type { OptionStore } from '@turnpike/core/options/store';
import type { Redis } from 'ioredis';

/** What the relay needs from the runtime; the API's `AppDeps` satisfies it, so ROLE=all shares one runtime. */
export interface RelayDeps {
  readonly config: ResolvedConfig;
  readonly db: Db;
  readonly bus: EventBus;
  readonly options: OptionStore;
  /**
   * Present when REDIS_URL is set: state shared by every relay process (the per-user request rate limit), under
   * the keys of `config.redisKeyPrefix`. Without it that state lives in this process.
   */
  readonly redis?: Redis | undefined;
  /** Short-lived shared values (notice limits); this process's own when absent. */
  readonly kv?: KvStore;
}

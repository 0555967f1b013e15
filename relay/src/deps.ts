import type { KvStore } from '@turnpike/core/kv/kv';
import type { RuntimeDeps } from '@turnpike/core/runtime/runtime';

/**
 * What the relay needs from core's runtime (`createRuntime`): the server passes the runtime's deps, so ROLE=all
 * shares one runtime with the console API. `redis`, when REDIS_URL is set, holds state shared by every relay
 * process (the per-user request rate limit) under the keys of `config.redisKeyPrefix`; without it that state lives
 * in this process.
 */
export interface RelayDeps extends Pick<RuntimeDeps, 'config' | 'db' | 'bus' | 'options' | 'redis'> {
  /** Short-lived shared values (notice limits); this process's own when absent. */
  readonly kv?: KvStore;
}

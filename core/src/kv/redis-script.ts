import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Runs a Lua script by its hash, loading it on the first NOSCRIPT (a restarted or new Redis). */
export function scriptRunner(redis: Redis, script: string) {
  const sha = createHash('sha1').update(script).digest('hex');
  return async (keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(script, keys.length, ...keys, ...args);
    }
  };
}

import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * The wait before each reconnection attempt while Redis is away: 50 ms more each time, never over 200 ms, so a
 * Redis that answers again is back in use within a fifth of a second. ioredis's default grows to 2 s, so after an
 * outage of half a minute a console change waited up to 2 s for the bus to reconnect (the README and docs/adr/0016
 * promise a second); an attempt on a Redis that is away costs one refused connection.
 */
export const reconnectSoon = (times: number): number => Math.min(times * 50, 200);

/**
 * One Redis connection from a URL, for every part of Turnpike that talks to Redis:
 * - `redis://[user:password@]host:port[/db]` and `rediss://…` (TLS): one server;
 * - `redis-sentinel://[:password@]host:port[,host:port…]/<master name>[/db]`: the master Sentinel names, followed
 *   through fail-overs;
 * - `redis-cluster://[:password@]host:port[,host:port…]`: a Redis Cluster. Keys one script touches together
 *   share a hash tag (`{ledger}`), so they live in one slot.
 * A Cluster client is returned under the `Redis` type: the commands Turnpike uses (strings, hashes, sets, sorted
 * sets, scripts, pub/sub) exist on both with the same signatures.
 */
export function createRedisClient(url: string, options: RedisOptions = {}): Redis {
  const scheme = url.slice(0, url.indexOf('://'));
  if (scheme === 'redis' || scheme === 'rediss')
    return new Redis(url, { retryStrategy: reconnectSoon, ...options });
  const { password, hosts, path } = splitMultiHostUrl(url, scheme === 'redis-sentinel' ? 26379 : 6379);
  if (scheme === 'redis-sentinel') {
    const [name, db] = path;
    if (!name) throw new Error('a redis-sentinel:// URL names its master after the hosts: …/mymaster');
    return new Redis({
      ...options,
      sentinels: hosts,
      name,
      ...(password ? { password, sentinelPassword: password } : {}),
      ...(db ? { db: Number(db) } : {}),
    });
  }
  if (scheme === 'redis-cluster') {
    const { lazyConnect, ...redisOptions } = options;
    const cluster = new Cluster(hosts, {
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      redisOptions: { ...redisOptions, ...(password ? { password } : {}) },
    });
    return cluster as unknown as Redis;
  }
  throw new Error(`unsupported Redis URL scheme ${scheme}://`);
}

/** The URL schemes `createRedisClient` accepts, for configuration checks. */
export const REDIS_URL_PATTERN: RegExp = /^(rediss?|redis-sentinel|redis-cluster):\/\/./;

function splitMultiHostUrl(
  url: string,
  defaultPort: number,
): {
  password: string | undefined;
  hosts: { host: string; port: number }[];
  path: string[];
} {
  const rest = url.slice(url.indexOf('://') + 3);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path =
    slash === -1
      ? []
      : rest
          .slice(slash + 1)
          .split('/')
          .filter(Boolean);
  const at = authority.lastIndexOf('@');
  const credentials = at === -1 ? '' : authority.slice(0, at);
  const password = credentials
    ? decodeURIComponent(credentials.slice(credentials.indexOf(':') + 1))
    : undefined;
  const hosts = (at === -1 ? authority : authority.slice(at + 1)).split(',').map((entry) => {
    const colon = entry.lastIndexOf(':');
    return colon === -1
      ? { host: entry, port: defaultPort }
      : { host: entry.slice(0, colon), port: Number(entry.slice(colon + 1)) };
  });
  return { password: password || undefined, hosts, path };
}

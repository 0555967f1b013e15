import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisClient, REDIS_URL_PATTERN } from './redis-client.ts';

describe('createRedisClient', () => {
  it('follows the master a Sentinel names', () => {
    const client = createRedisClient('redis-sentinel://:s3cret@10.0.0.1:26379,10.0.0.2/mymaster/2', {
      lazyConnect: true,
    });
    expect(client).toBeInstanceOf(Redis);
    expect(client.options).toMatchObject({
      name: 'mymaster',
      db: 2,
      password: 's3cret',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
      ],
    });
    client.disconnect();
  });

  it('joins a Redis Cluster from its seed nodes', () => {
    const client = createRedisClient('redis-cluster://10.0.0.1:7000,10.0.0.2:7001', { lazyConnect: true });
    expect(client).toBeInstanceOf(Cluster);
    expect((client as unknown as { startupNodes: unknown }).startupNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
    ]);
    client.disconnect();
  });

  it('accepts the four URL forms and nothing else', () => {
    for (const url of ['redis://h:6379', 'rediss://h', 'redis-sentinel://h/m', 'redis-cluster://h:1'])
      expect(REDIS_URL_PATTERN.test(url)).toBe(true);
    expect(REDIS_URL_PATTERN.test('http://h')).toBe(false);
    expect(() => createRedisClient('memcached://h')).toThrow(/unsupported/);
    expect(() => createRedisClient('redis-sentinel://h:1')).toThrow(/master/);
  });
});

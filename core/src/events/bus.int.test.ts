import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hasRedisServer, startTestRedisServer } from '../testing/redis-server.ts';
import { createMemoryBus, createRedisBus, type GatewayEvent } from './bus.ts';

describe('memory bus', () => {
  it('delivers to every subscriber until it unsubscribes', async () => {
    const bus = createMemoryBus();
    const seen: GatewayEvent[] = [];
    const off = bus.subscribe((e) => seen.push(e));
    await bus.publish({ type: 'options.changed', keys: ['A'] });
    off();
    await bus.publish({ type: 'options.changed', keys: ['B'] });
    expect(seen).toEqual([{ type: 'options.changed', keys: ['A'] }]);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('redis bus', () => {
  it('delivers an event published in one process to another exactly once each', async () => {
    const prefix = `turnpike-test:${randomBytes(4).toString('hex')}:`;
    const a = await createRedisBus(process.env.TEST_REDIS_URL!, prefix);
    const b = await createRedisBus(process.env.TEST_REDIS_URL!, prefix);
    const seenA: GatewayEvent[] = [];
    const seenB: GatewayEvent[] = [];
    a.subscribe((e) => seenA.push(e));
    const received = new Promise<void>((resolve) =>
      b.subscribe((e) => {
        seenB.push(e);
        resolve();
      }),
    );
    await a.publish({ type: 'users.changed', ids: [7] });
    await received;
    await new Promise((r) => setTimeout(r, 50));
    expect(seenA).toEqual([{ type: 'users.changed', ids: [7] }]);
    expect(seenB).toEqual([{ type: 'users.changed', ids: [7] }]);
    await a.close();
    await b.close();
  });
});

describe.skipIf(!hasRedisServer())('redis bus while Redis is away', () => {
  it('opens while Redis is down, serves its own process, and joins the others once Redis is up', async () => {
    const redis = await startTestRedisServer();
    try {
      await redis.stop();
      const prefix = `turnpike-test:${randomBytes(4).toString('hex')}:`;
      const lonely = await createRedisBus(redis.url, prefix);
      const seen: GatewayEvent[] = [];
      lonely.subscribe((e) => seen.push(e));
      // Its own change is applied here even though nobody else can hear it.
      expect(await lonely.publish({ type: 'users.changed', ids: [1] })).toBe(0);
      expect(seen).toEqual([{ type: 'users.changed', ids: [1] }]);

      await redis.start();
      const other = await createRedisBus(redis.url, prefix);
      const deadline = Date.now() + 10_000;
      // Once the first bus has reconnected and subscribed, the other's events reach it.
      while (!seen.some((e) => e.type === 'tokens.changed')) {
        if (Date.now() > deadline) throw new Error('the bus never heard the other process');
        await other.publish({ type: 'tokens.changed', ids: [2] });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await lonely.close();
      await other.close();
    } finally {
      await redis.close();
    }
  });
});

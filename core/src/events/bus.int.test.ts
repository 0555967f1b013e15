import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hasRedisServer, startTestRedisServer } from '../testing/redis-server.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { createMemoryBus, createRedisBus, type EventBus, type GatewayEvent } from './bus.ts';

const newPrefix = () => `turnpike-test:${randomBytes(4).toString('hex')}:`;

/** Resolves with the time (ms since the Unix epoch) `bus` first delivers an event `matches` accepts; 10 s at most. */
function deliveredAt(bus: EventBus, matches: (event: GatewayEvent) => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('not delivered within 10 s'));
    }, 10_000);
    const off = bus.subscribe((event) => {
      if (!matches(event)) return;
      clearTimeout(timer);
      off();
      resolve(Date.now());
    });
  });
}

/** Polls `isDone` every 10 ms until it is true, for at most `ms`. */
async function until(isDone: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await isDone())) {
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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

describe.skipIf(!process.env.TEST_REDIS_URL)('redis bus when a subscription comes back', () => {
  const url = process.env.TEST_REDIS_URL as string;

  /**
   * `b` reaches Redis through a proxy, cut once both have heard a first change; `a` (the console, say) keeps its
   * own connection. `seen`: what `b` is given from the cut on; `restore()` gives `b` its connection back.
   */
  async function cutOffSubscriber() {
    const prefix = newPrefix();
    const proxy = await startTcpProxy(url);
    const a = await createRedisBus(url, prefix);
    const b = await createRedisBus(proxy.urlThrough(url), prefix);
    // Both hear a first change: b has a version it last heard.
    const first = deliveredAt(b, (e) => e.type === 'users.changed');
    await a.publish({ type: 'users.changed', ids: [1] });
    await first;
    const seen: GatewayEvent[] = [];
    b.subscribe((e) => seen.push(e));
    await proxy.refuse();
    proxy.resetAll();
    const close = async () => {
      await a.close();
      await b.close();
      await proxy.close();
    };
    return { a, b, seen, restore: () => proxy.restore(), close };
  }

  it('applies a change published while the subscriber was cut off within a second of its return', async () => {
    const { a, b, seen, restore, close } = await cutOffSubscriber();
    try {
      const version = await a.publish({ type: 'channels.changed', ids: [42] });
      expect(version).toBeGreaterThan(0);
      await a.publish({ type: 'tokens.changed', ids: [7] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seen, 'nothing reaches a subscriber that is cut off').toEqual([]);

      const back = Date.now();
      const tokens = deliveredAt(b, (e) => e.type === 'tokens.changed');
      await restore();
      const at = await tokens;
      expect(at - back, 'ms from the return of Redis to the change applied').toBeLessThanOrEqual(1_000);
      // What was missed, in the order it was made, and nothing else (the log reached back far enough).
      expect(seen).toEqual([
        { type: 'channels.changed', ids: [42] },
        { type: 'tokens.changed', ids: [7] },
      ]);
      await until(() => b.appliedVersion() === version + 1);
    } finally {
      await close();
    }
  });

  it('reloads everything when it missed more changes than the log keeps', async () => {
    const { a, b, seen, restore, close } = await cutOffSubscriber();
    try {
      // More than the 1,000 changes the log keeps: the first ones are gone from it.
      for (let i = 0; i < 1_005; i += 1) await a.publish({ type: 'users.changed', ids: [i] });
      const back = Date.now();
      const everything = deliveredAt(b, (e) => e.type === 'all.changed');
      await restore();
      expect((await everything) - back).toBeLessThanOrEqual(1_000);
      expect(seen).toEqual([{ type: 'all.changed' }]);
    } finally {
      await close();
    }
  });
});

describe.skipIf(!hasRedisServer())('redis bus when Redis comes back empty', () => {
  it('reloads everything in every process within a second of Redis answering', async () => {
    const redis = await startTestRedisServer();
    const prefix = newPrefix();
    const a = await createRedisBus(redis.url, prefix);
    const b = await createRedisBus(redis.url, prefix);
    try {
      await a.publish({ type: 'users.changed', ids: [1] });
      await redis.stop();
      // Made while Redis is away, and lost with it: what else was, nobody can tell.
      await a.publish({ type: 'options.changed', keys: ['ModelPrice'] });
      const everythingA = deliveredAt(a, (e) => e.type === 'all.changed');
      const everythingB = deliveredAt(b, (e) => e.type === 'all.changed');
      // No persistence: the version counter, the log and the epoch are gone.
      await redis.start();
      const back = Date.now();
      expect((await everythingA) - back).toBeLessThanOrEqual(1_000);
      expect((await everythingB) - back).toBeLessThanOrEqual(1_000);
    } finally {
      await a.close();
      await b.close();
      await redis.close();
    }
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('redis bus when a publisher was cut off', () => {
  it('publishes a change made while it could not reach Redis as soon as it can, in order', async () => {
    const url = process.env.TEST_REDIS_URL as string;
    const prefix = newPrefix();
    const proxy = await startTcpProxy(url);
    const console = await createRedisBus(proxy.urlThrough(url), prefix);
    const relay = await createRedisBus(url, prefix);
    try {
      const relaySeen: GatewayEvent[] = [];
      relay.subscribe((e) => relaySeen.push(e));
      await proxy.refuse();
      proxy.resetAll();
      // Applied in the console's own process at once; numbered 0, as nobody else could hear it.
      const consoleSeen: GatewayEvent[] = [];
      console.subscribe((e) => consoleSeen.push(e));
      expect(await console.publish({ type: 'options.changed', keys: ['ModelPrice'] })).toBe(0);
      expect(await console.publish({ type: 'channels.changed', ids: [3] })).toBe(0);
      expect(consoleSeen).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(relaySeen).toEqual([]);

      const channels = deliveredAt(relay, (e) => e.type === 'channels.changed');
      await proxy.restore();
      const back = Date.now();
      expect((await channels) - back, 'ms from the return of the connection').toBeLessThanOrEqual(1_000);
      expect(relaySeen).toEqual([
        { type: 'options.changed', keys: ['ModelPrice'] },
        { type: 'channels.changed', ids: [3] },
      ]);
      // The console does not apply its own changes a second time.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(consoleSeen).toHaveLength(2);
    } finally {
      await console.close();
      await relay.close();
      await proxy.close();
    }
  });
});

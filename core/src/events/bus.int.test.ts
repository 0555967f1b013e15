import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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

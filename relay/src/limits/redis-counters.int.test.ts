/**
 * The Redis counters (docs/adr/0028) on a real Redis: three connections stand for three relay processes.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { sleep } from '../testing/wait.ts';
import type { CounterRequest } from './counters.ts';
import { createRedisCounterStore } from './redis-counters.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const connections: Redis[] = [];

afterAll(() => {
  for (const connection of connections) connection.disconnect();
});

/** Three stores on three connections, under one fresh prefix. */
function processes() {
  const prefix = `limits-test-${randomBytes(4).toString('hex')}:`;
  return Array.from({ length: 3 }, () => {
    const connection = new Redis(redisUrl as string);
    connections.push(connection);
    return createRedisCounterStore(connection, prefix);
  });
}

const request = (fields: Partial<CounterRequest>): CounterRequest => ({
  rates: [],
  slots: [],
  member: randomBytes(6).toString('hex'),
  windowMs: 60_000,
  leaseMs: 60_000,
  ...fields,
});

describe.skipIf(!redisUrl)('limit counters in Redis', () => {
  it('admits exactly up to the limit when three processes ask at once', async () => {
    const stores = processes();
    const results = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        (stores[i % 3] as (typeof stores)[0]).admit(
          request({
            rates: [
              { key: 'm:x:tpm', limit: 5000, amount: 333 },
              { key: 'm:x:rpm', limit: 100, amount: 1 },
            ],
            slots: [{ key: 'm:x:conc', limit: 50 }],
          }),
        ),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(15); // 15 x 333 = 4995 <= 5000 < 16 x 333
    const refused = results.find((r) => !r.ok);
    expect(refused).toMatchObject({ ok: false, refused: { type: 'rate', index: 0 } });
    expect(refused?.rateUsed[0]).toBe(4995);
    // All or nothing: the refused requests took no request count and no slot.
    const probe = await (stores[0] as (typeof stores)[0]).admit(
      request({
        rates: [{ key: 'm:x:rpm', limit: 100, amount: 0 }],
        slots: [{ key: 'm:x:conc', limit: 50 }],
      }),
    );
    expect(probe).toMatchObject({ ok: true, rateUsed: [15], slotsHeld: [15] });
  });

  it('gives back the slot of a process that died holding it once its lease ends', async () => {
    const [crashed, alive] = processes() as [
      ReturnType<typeof createRedisCounterStore>,
      ReturnType<typeof createRedisCounterStore>,
    ];
    const slot = { slots: [{ key: 't:1:conc', limit: 1 }], leaseMs: 400 };
    expect((await crashed.admit(request(slot))).ok).toBe(true);
    // Nobody releases or renews it: the crashed relay is gone.
    expect(await alive.admit(request(slot))).toMatchObject({
      ok: false,
      refused: { type: 'slot', index: 0 },
    });
    await sleep(450);
    const mine = request(slot);
    expect((await alive.admit(mine)).ok).toBe(true);
    // A lease that is renewed outlives its first term; released, it is free at once.
    await sleep(250);
    await alive.renew(['t:1:conc'], mine.member, 400);
    await sleep(250);
    expect((await crashed.admit(request(slot))).ok).toBe(false);
    await alive.release(['t:1:conc'], mine.member);
    expect((await crashed.admit(request(slot))).ok).toBe(true);
  });

  it('corrects a token counter with the real usage, in the bucket it was charged to', async () => {
    const [one, two] = processes() as [
      ReturnType<typeof createRedisCounterStore>,
      ReturnType<typeof createRedisCounterStore>,
    ];
    const tpm = (amount: number) => request({ rates: [{ key: 'u:1:tpm', limit: 1000, amount }] });
    const first = await one.admit(tpm(900));
    expect(first.ok).toBe(true);
    expect((await two.admit(tpm(200))).ok).toBe(false);
    if (first.ok) await one.correct(['u:1:tpm'], first.bucket, [-850], 60_000);
    const second = await two.admit(tpm(900));
    expect(second).toMatchObject({ ok: true, rateUsed: [50] });
    // Usage above the estimate counts too.
    if (second.ok) await two.correct(['u:1:tpm'], second.bucket, [60], 60_000);
    const probe = await one.admit(tpm(0));
    expect(probe.rateUsed).toEqual([1010]);
  });

  it('says when the window will have room again', async () => {
    const [store] = processes() as [ReturnType<typeof createRedisCounterStore>];
    const rpm = request({ rates: [{ key: 'k:rpm', limit: 2, amount: 1 }], windowMs: 600 });
    expect((await store.admit({ ...rpm, member: 'a' })).ok).toBe(true);
    expect((await store.admit({ ...rpm, member: 'b' })).ok).toBe(true);
    const refused = await store.admit({ ...rpm, member: 'c' });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.retryAfterMs).toBeGreaterThan(500);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(620);
    await sleep(refused.retryAfterMs + 5);
    expect((await store.admit({ ...rpm, member: 'd' })).ok).toBe(true);
  });
});

import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../events/bus.ts';
import { createTestRuntime, type TestRuntime } from '../testing/test-runtime.ts';
import { inOneTransaction, isInAmbientTransaction } from './ambient.ts';
import { options } from './schema/options.ts';

describe('one transaction around code that does not know about it', () => {
  let t: TestRuntime;
  const db = () => t.runtime.deps.db;
  const bus = () => t.runtime.deps.bus;
  const storedValue = async (key: string) =>
    (await db().select().from(options).where(eq(options.key, key)))[0]?.value;

  beforeAll(async () => {
    t = await createTestRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds events until the commit, so a subscriber that reloads reads the committed row', async () => {
    const seen: { event: GatewayEvent; stored: string | undefined; inside: boolean }[] = [];
    const stop = bus().subscribe(async (event) => {
      if (event.type === 'options.changed' && event.keys.includes('ambient.a'))
        seen.push({ event, stored: await storedValue('ambient.a'), inside: isInAmbientTransaction() });
    });
    try {
      await inOneTransaction(db(), bus(), async () => {
        await db().insert(options).values({ key: 'ambient.a', value: 'one' });
        expect(await bus().publish({ type: 'options.changed', keys: ['ambient.a'] })).toBe(0);
        expect(seen).toEqual([]);
      });
      expect(seen).toEqual([
        { event: { type: 'options.changed', keys: ['ambient.a'] }, stored: 'one', inside: false },
      ]);
    } finally {
      stop();
    }
  });

  it('rolls back every query made through the database when the work throws, and still announces', async () => {
    const heard: GatewayEvent[] = [];
    const stop = bus().subscribe((event) => {
      heard.push(event);
    });
    try {
      await expect(
        inOneTransaction(db(), bus(), async () => {
          await db().insert(options).values({ key: 'ambient.b', value: 'never' });
          await bus().publish({ type: 'options.changed', keys: ['ambient.b'] });
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
    } finally {
      stop();
    }
    expect(await storedValue('ambient.b')).toBeUndefined();
    // A cache that took the value while it was written reloads it and finds it gone.
    expect(heard).toContainEqual({ type: 'options.changed', keys: ['ambient.b'] });
  });

  it("turns a service's own transaction into a savepoint of it", async () => {
    await inOneTransaction(db(), bus(), async () => {
      await db().insert(options).values({ key: 'ambient.c', value: 'kept' });
      await expect(
        db().transaction(async (tx) => {
          await tx.insert(options).values({ key: 'ambient.d', value: 'undone' });
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
    });
    expect(await storedValue('ambient.c')).toBe('kept');
    expect(await storedValue('ambient.d')).toBeUndefined();
  });
});

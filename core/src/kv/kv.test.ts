import { describe, expect, it } from 'vitest';
import { createMemoryKv } from './kv.ts';

describe('memory KV store', () => {
  it('expires values after their time to live', async () => {
    let now = 1_000_000;
    const kv = createMemoryKv(10, () => now);
    await kv.set('code', '123456', 60);
    expect(await kv.get('code')).toBe('123456');
    now += 61_000;
    expect(await kv.get('code')).toBeUndefined();
  });

  it('hands a value out once with take', async () => {
    const kv = createMemoryKv();
    await kv.set('once', 'v', 60);
    expect(await kv.take('once')).toBe('v');
    expect(await kv.take('once')).toBeUndefined();
  });

  it('counts within a window that starts at the first increment', async () => {
    let now = 0;
    const kv = createMemoryKv(10, () => now);
    expect(await kv.incr('n', 10)).toBe(1);
    now += 5_000;
    expect(await kv.incr('n', 10)).toBe(2);
    now += 6_000;
    expect(await kv.incr('n', 10)).toBe(1);
  });

  it('stays within its size bound by dropping the oldest entries', async () => {
    const kv = createMemoryKv(3);
    for (const key of ['a', 'b', 'c', 'd']) await kv.set(key, key, 60);
    expect(await kv.get('a')).toBeUndefined();
    expect(await kv.get('d')).toBe('d');
  });
});

import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { releaseStartupMemory } from './release-memory.ts';

describe('releaseStartupMemory', () => {
  it('gives back the heap that dead objects held, as a start leaves it', () => {
    // ~60 MB of short-lived objects, as the module loader leaves behind, then dropped
    let garbage: { text: string }[][] | undefined = Array.from({ length: 60 }, (_, i) =>
      Array.from({ length: 10_000 }, (_, j) => ({ text: `${i}:${j}:${'x'.repeat(64)}` })),
    );
    const held = getHeapStatistics().total_physical_size;
    expect(garbage.length).toBe(60);
    garbage = undefined;
    releaseStartupMemory();
    const after = getHeapStatistics().total_physical_size;
    expect(held - after).toBeGreaterThan(30 * 1024 * 1024);
  });

  it('leaves no gc function on the global object', () => {
    releaseStartupMemory();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { waitFor } from '../testing/wait.ts';
import { createWorkQueue } from './work-queue.ts';

describe('keyed work queue', () => {
  it('never runs one key twice at once, and runs it again when it was added meanwhile', async () => {
    const running = new Set<string>();
    let overlaps = 0;
    const runs: string[] = [];
    let release: (() => void) | undefined;
    const queue = createWorkQueue(
      async (key) => {
        if (running.has(key)) overlaps += 1;
        running.add(key);
        runs.push(key);
        if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
        running.delete(key);
        return undefined;
      },
      { concurrency: 4 },
    );
    queue.start();
    queue.add('a');
    await waitFor(() => release !== undefined);
    queue.add('a');
    queue.add('a');
    queue.add('b');
    await waitFor(() => runs.includes('b'));
    release?.();
    await waitFor(() => queue.idle());
    expect(overlaps).toBe(0);
    expect(runs.filter((k) => k === 'a')).toHaveLength(2); // the two adds during the run fold into one
    await queue.stop();
  });

  it('retries a failing key with exponential backoff, capped', async () => {
    const at: number[] = [];
    const results: string[] = [];
    const queue = createWorkQueue(
      async () => {
        at.push(performance.now());
        if (at.length < 6) throw new Error('not yet');
        return undefined;
      },
      { baseDelayMs: 10, maxDelayMs: 40, onDone: (_key, result) => results.push(result) },
    );
    queue.start();
    queue.add('k');
    await waitFor(() => results.at(-1) === 'success', { timeoutMs: 5_000 });
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    expect(results).toEqual(['error', 'error', 'error', 'error', 'error', 'success']);
    // 10, 20, 40, 40, 40 ms: doubling, then held at the cap (timers fire late, never early)
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(19);
    for (const gap of gaps.slice(2)) expect(gap).toBeGreaterThanOrEqual(39);
    expect(Math.min(...gaps.slice(2))).toBeLessThan(200);
    await queue.stop();
  });

  it('calls a key again after the delay its handler asks for, and reports depth', async () => {
    let calls = 0;
    const depths: number[] = [];
    const queue = createWorkQueue(
      async () => {
        calls += 1;
        return calls < 3 ? { requeueAfterMs: 5 } : undefined;
      },
      { onDepth: (d) => depths.push(d) },
    );
    queue.start();
    queue.add('x');
    await waitFor(() => calls === 3 && queue.idle());
    expect(depths).toContain(1);
    expect(queue.depth()).toBe(0);
    await queue.stop();
  });
});

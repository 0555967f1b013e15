import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startTestLoop } from './test-loop.ts';

describe('the periodic test loop', () => {
  it('runs a round every interval, the first after one interval', async () => {
    let runs = 0;
    const loop = startTestLoop({
      everyMs: 30,
      run: async () => {
        runs += 1;
      },
    });
    expect(runs).toBe(0);
    await sleep(110);
    await loop.stop();
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(loop.rounds).toBe(runs);
  });

  it('never starts a round while the previous one runs', async () => {
    let active = 0;
    let most = 0;
    const loop = startTestLoop({
      everyMs: 10,
      run: async () => {
        active += 1;
        most = Math.max(most, active);
        await sleep(45);
        active -= 1;
      },
    });
    await sleep(150);
    await loop.stop();
    expect(most).toBe(1);
    expect(loop.rounds).toBeGreaterThanOrEqual(2);
  });

  it('stops: aborts the round in progress, waits for it, and runs no more', async () => {
    let aborted = false;
    let finished = false;
    const loop = startTestLoop({
      everyMs: 10,
      run: async (signal) => {
        await sleep(10_000, undefined, { signal }).catch(() => {
          aborted = signal.aborted;
        });
        finished = true;
      },
    });
    await sleep(30);
    await loop.stop();
    expect(aborted).toBe(true);
    expect(finished).toBe(true);
    const rounds = loop.rounds;
    await sleep(40);
    expect(loop.rounds).toBe(rounds);
  });

  it('reports a failed round and keeps going', async () => {
    const errors: unknown[] = [];
    const loop = startTestLoop({
      everyMs: 15,
      run: async () => {
        throw new Error('database away');
      },
      onError: (error) => errors.push(error),
    });
    await sleep(70);
    await loop.stop();
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect((errors[0] as Error).message).toBe('database away');
  });
});

import { describe, expect, it } from 'vitest';
import {
  buildRoutingTable,
  effectiveWeight,
  modelsOfGroup,
  pickChannel,
  type RoutableChannel,
  type RoutingTable,
  tiersFor,
} from './pick.ts';

const channel = (id: number, over: Partial<RoutableChannel> = {}): RoutableChannel => ({
  id,
  group: 'default',
  models: 'gpt-4o',
  priority: 0,
  weight: 0,
  isEnabled: true,
  ...over,
});

const always = () => true;
const none = new Set<number>();

function picks(table: RoutingTable, count: number, model = 'gpt-4o'): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const result = pickChannel(table, {
      group: 'default',
      model,
      attempt: 0,
      tried: none,
      isAvailable: always,
    });
    if (!result) throw new Error('no channel');
    out.push(result.channelId);
  }
  return out;
}

/** Longest run of the same channel, the burst users complain about. */
function longestRun(sequence: readonly number[]): Map<number, number> {
  const runs = new Map<number, number>();
  let run = 0;
  for (let i = 0; i < sequence.length; i += 1) {
    run = i > 0 && sequence[i] === sequence[i - 1] ? run + 1 : 1;
    const id = sequence[i] as number;
    runs.set(id, Math.max(runs.get(id) ?? 0, run));
  }
  return runs;
}

/** The reference's choice: independent weighted random draws (seeded, for a repeatable comparison). */
function weightedRandom(weights: readonly [number, number][], count: number): number[] {
  let state = 12345;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  const out: number[] = [];
  for (let i = 0; i < count; i += 1) {
    let draw = random() * total;
    for (const [id, w] of weights) {
      draw -= w;
      if (draw < 0) {
        out.push(id);
        break;
      }
    }
  }
  return out;
}

describe('buildRoutingTable', () => {
  it('indexes enabled channels by group, model and priority, highest first', () => {
    const table = buildRoutingTable([
      channel(1, { group: 'default, vip', models: 'gpt-4o,gpt-4o-mini', priority: 10 }),
      channel(2, { models: 'gpt-4o', priority: 0 }),
      channel(3, { models: 'gpt-4o', priority: 10 }),
      channel(4, { models: 'gpt-4o', isEnabled: false }),
    ]);
    const tiers = tiersFor(table, 'default', 'gpt-4o');
    expect(tiers.map((t) => [t.priority, [...t.channelIds]])).toEqual([
      [10, [1, 3]],
      [0, [2]],
    ]);
    expect(tiersFor(table, 'vip', 'gpt-4o-mini').map((t) => [...t.channelIds])).toEqual([[1]]);
    expect(modelsOfGroup(table, 'default')).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(tiersFor(table, 'nobody', 'gpt-4o')).toEqual([]);
  });

  it('routes every custom GPT name to the gizmo entry', () => {
    const table = buildRoutingTable([channel(1, { models: 'gpt-4-gizmo-*' })]);
    expect(picks(table, 1, 'gpt-4-gizmo-g-abc123')).toEqual([1]);
  });
});

describe('pickChannel', () => {
  it('splits traffic by weight + 10, exactly over a window', () => {
    // effective weights 40 : 10 : 50
    const channels = [channel(1, { weight: 30 }), channel(2, { weight: 0 }), channel(3, { weight: 40 })];
    const shares = (sequence: number[]) => [1, 2, 3].map((id) => sequence.filter((x) => x === id).length);
    // From the zero state every window of 100 picks holds each channel exactly its weight times.
    const fromZero = picks(
      buildRoutingTable(channels, () => 0),
      1000,
    );
    expect(shares(fromZero)).toEqual([400, 100, 500]);
    // From a random starting point (what a relay pod gets), a window is off by at most one pick per channel.
    for (let run = 0; run < 50; run += 1) {
      const [a, b, c] = shares(picks(buildRoutingTable(channels), 1000)) as [number, number, number];
      expect(Math.abs(a - 400)).toBeLessThanOrEqual(1);
      expect(Math.abs(b - 100)).toBeLessThanOrEqual(1);
      expect(Math.abs(c - 500)).toBeLessThanOrEqual(1);
    }
    expect(effectiveWeight(null)).toBe(10);
  });

  it('is smooth where weighted random is bursty (the burst-length test of ADR 0007)', () => {
    // 90 vs 0 → effective 100 : 10; the minor channel should come every ~11 picks.
    const table = buildRoutingTable([channel(1, { weight: 90 }), channel(2, { weight: 0 })]);
    const smooth = picks(table, 11_000);
    const random = weightedRandom(
      [
        [1, 100],
        [2, 10],
      ],
      11_000,
    );
    const smoothRuns = longestRun(smooth);
    const randomRuns = longestRun(random);
    console.log(
      `longest run of the major channel over 11000 picks: smooth WRR ${smoothRuns.get(1)}, weighted random ${randomRuns.get(1)}; ` +
        `minor channel: smooth ${smoothRuns.get(2)}, random ${randomRuns.get(2)}`,
    );
    expect(smoothRuns.get(1)).toBe(10);
    expect(smoothRuns.get(2)).toBe(1);
    expect(randomRuns.get(1)).toBeGreaterThan(40);
    expect(randomRuns.get(2)).toBeGreaterThan(1);
  });

  it('starts processes at different points of the cycle', () => {
    const channels = [channel(1), channel(2), channel(3), channel(4)];
    let seed = 0;
    const firsts = new Set<number>();
    for (let i = 0; i < 8; i += 1) {
      const random = () => {
        seed = (seed * 7 + 3) % 101;
        return seed / 101;
      };
      firsts.add(picks(buildRoutingTable(channels, random), 1)[0] as number);
    }
    expect(firsts.size).toBeGreaterThan(1);
  });

  it('never re-picks a tried channel and walks down the tiers on retry', () => {
    const table = buildRoutingTable([
      channel(1, { priority: 10 }),
      channel(2, { priority: 10 }),
      channel(3, { priority: 5 }),
      channel(4, { priority: 0 }),
    ]);
    const tried = new Set<number>();
    const order: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const result = pickChannel(table, {
        group: 'default',
        model: 'gpt-4o',
        attempt,
        tried,
        isAvailable: always,
      });
      if (!result) break;
      tried.add(result.channelId);
      order.push(result.channelId);
    }
    // attempt 0: top tier; 1: tier 5; 2: tier 0; 3: back up to the untried top-tier channel; 4: nothing left.
    expect(order.slice(1, 3)).toEqual([3, 4]);
    expect(new Set(order.slice(0, 1).concat(order.slice(3)))).toEqual(new Set([1, 2]));
    expect(order).toHaveLength(4);
  });

  it('checks availability at pick time (a channel disabled since the last rebuild is skipped)', () => {
    const table = buildRoutingTable([channel(1, { weight: 100 }), channel(2)]);
    const disabled = new Set([1]);
    const input = {
      group: 'default',
      model: 'gpt-4o',
      attempt: 0,
      tried: none,
      isAvailable: (id: number) => !disabled.has(id),
    };
    for (let i = 0; i < 20; i += 1) expect(pickChannel(table, input)?.channelId).toBe(2);
    disabled.add(2);
    expect(pickChannel(table, input)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { countsTowardCooldown, createCooldownTracker } from './cooldown.ts';

const policy = { failures: 3, windowMs: 60_000, cooldownMs: 5 * 60_000 };

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('cool-down tracker', () => {
  it('rests a channel on the third failure within the window, not before', () => {
    const time = clock();
    const tracker = createCooldownTracker({ now: time.now });
    expect(tracker.recordFailure(7, policy)).toBeUndefined();
    time.advance(10_000);
    expect(tracker.recordFailure(7, policy)).toBeUndefined();
    expect(tracker.isCoolingDown(7)).toBe(false);
    time.advance(10_000);
    expect(tracker.recordFailure(7, policy)).toBe(time.now() + policy.cooldownMs);
    expect(tracker.isCoolingDown(7)).toBe(true);
    expect(tracker.isCoolingDown(8)).toBe(false);
  });

  it('forgets failures older than the window', () => {
    const time = clock();
    const tracker = createCooldownTracker({ now: time.now });
    tracker.recordFailure(1, policy);
    tracker.recordFailure(1, policy);
    time.advance(60_001);
    expect(tracker.recordFailure(1, policy)).toBeUndefined();
    expect(tracker.isCoolingDown(1)).toBe(false);
    time.advance(1000);
    expect(tracker.recordFailure(1, policy)).toBeUndefined();
    expect(tracker.recordFailure(1, policy)).toBeDefined();
  });

  it('brings the channel back by itself when the rest is over, with a fresh count', () => {
    const time = clock();
    const tracker = createCooldownTracker({ now: time.now });
    for (let i = 0; i < 3; i += 1) tracker.recordFailure(2, policy);
    time.advance(policy.cooldownMs - 1);
    expect(tracker.isCoolingDown(2)).toBe(true);
    time.advance(1);
    expect(tracker.isCoolingDown(2)).toBe(false);
    expect(tracker.coolingUntil(2)).toBeUndefined();
    expect(tracker.recordFailure(2, policy)).toBeUndefined();
  });

  it('does not extend a rest with failures of requests still in flight', () => {
    const time = clock();
    const tracker = createCooldownTracker({ now: time.now });
    for (let i = 0; i < 3; i += 1) tracker.recordFailure(3, policy);
    const until = tracker.coolingUntil(3);
    time.advance(1000);
    for (let i = 0; i < 5; i += 1) expect(tracker.recordFailure(3, policy)).toBeUndefined();
    expect(tracker.coolingUntil(3)).toBe(until);
  });

  it('rests at once with a policy of one failure', () => {
    const tracker = createCooldownTracker({ now: clock().now });
    expect(tracker.recordFailure(4, { ...policy, failures: 1 })).toBeDefined();
    expect(tracker.isCoolingDown(4)).toBe(true);
  });

  it('drops rests and counts of channels that no longer exist', () => {
    const tracker = createCooldownTracker({ now: clock().now });
    for (let i = 0; i < 3; i += 1) tracker.recordFailure(5, policy);
    tracker.recordFailure(6, policy);
    tracker.recordFailure(6, policy);
    tracker.prune((id) => id !== 5 && id !== 6);
    expect(tracker.isCoolingDown(5)).toBe(false);
    // Channel 6's two failures are gone: two more do not rest it.
    tracker.recordFailure(6, policy);
    expect(tracker.recordFailure(6, policy)).toBeUndefined();
  });

  it('clears one channel or all', () => {
    const tracker = createCooldownTracker({ now: clock().now });
    for (const id of [1, 2]) for (let i = 0; i < 3; i += 1) tracker.recordFailure(id, policy);
    tracker.clear(1);
    expect(tracker.isCoolingDown(1)).toBe(false);
    expect(tracker.isCoolingDown(2)).toBe(true);
    tracker.clear();
    expect(tracker.isCoolingDown(2)).toBe(false);
  });
});

describe('which failures count toward a cool-down', () => {
  it.each([
    [429, true],
    [408, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
  ])('an upstream %i counts: %s', (status, expected) => {
    expect(countsTowardCooldown({ status, isLocal: false })).toBe(expected);
  });

  it('never counts an error the gateway raised itself', () => {
    expect(countsTowardCooldown({ status: 503, isLocal: true })).toBe(false);
    expect(countsTowardCooldown({ status: 500, isLocal: true })).toBe(false);
  });
});

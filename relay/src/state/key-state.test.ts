import { describe, expect, it } from 'vitest';
import { createKeyStates, type RelayKey } from './key-state.ts';

const keys: RelayKey[] = ['a', 'b', 'c'].map((k, index) => ({
  index,
  key: `sk-${k}`,
  fingerprint: k,
  status: 1,
}));

describe('key states', () => {
  it('polls the keys in order, skipping disabled and resting ones', () => {
    let clock = 1_000;
    const states = createKeyStates({ now: () => clock });
    const pick = () => states.choose(7, keys, 'polling')?.fingerprint;
    expect([pick(), pick(), pick(), pick()]).toEqual(['a', 'b', 'c', 'a']);
    states.rest(7, 'b', clock + 500);
    expect([pick(), pick(), pick()]).toEqual(['c', 'a', 'c']);
    clock += 600;
    states.markDisabled(7, 'c');
    expect([pick(), pick(), pick()]).toEqual(['a', 'b', 'a']);
  });

  it('picks randomly among usable keys, prefers a bound key, and answers nothing when none is left', () => {
    const states = createKeyStates({ random: () => 0.99 });
    expect(states.choose(1, keys, 'random')?.fingerprint).toBe('c');
    expect(states.choose(1, keys, 'random', 'a')?.fingerprint).toBe('a');
    states.markDisabled(1, 'a');
    expect(states.choose(1, keys, 'random', 'a')?.fingerprint).toBe('c');
    states.markDisabled(1, 'b');
    states.markDisabled(1, 'c');
    expect(states.choose(1, keys, 'random')).toBeUndefined();
    expect(states.choose(1, [{ ...keys[0]!, status: 3 }], 'polling')).toBeUndefined();
  });

  it('forgets a local disable once the stored status agrees, and rests of vanished keys', () => {
    const states = createKeyStates();
    states.markDisabled(1, 'a');
    states.rest(1, 'b', Date.now() + 60_000);
    states.prune(
      (_, fp) => (fp === 'a' ? 1 : undefined),
      () => true,
    );
    expect(states.isUsable(1, keys[0]!)).toBe(false); // the write has not landed yet
    expect(states.restingUntil(1, 'b')).toBeUndefined();
    states.prune(
      () => 3,
      () => true,
    );
    expect(states.isUsable(1, keys[0]!)).toBe(true);
  });
});

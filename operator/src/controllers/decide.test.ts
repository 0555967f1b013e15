import { describe, expect, it } from 'vitest';
import { FINALIZER, type ObjectMeta } from '../api/v1alpha1.ts';
import { sameConditions, setConditions } from '../runtime/conditions.ts';
import { decide, relaysSummary } from './decide.ts';

const meta = (extra: Partial<ObjectMeta> = {}): ObjectMeta => ({
  name: 'x',
  namespace: 'ns',
  generation: 1,
  ...extra,
});

describe('reconcile decision', () => {
  it.each<[string, ObjectMeta | undefined, string]>([
    ['a resource no longer there', undefined, 'forget'],
    ['a new resource', meta(), 'add-finalizer'],
    ['a resource with our finalizer', meta({ finalizers: [FINALIZER] }), 'apply'],
    ['a resource with only another finalizer', meta({ finalizers: ['other/x'] }), 'add-finalizer'],
    [
      'a deleted resource with our finalizer',
      meta({ finalizers: [FINALIZER, 'other/x'], deletionTimestamp: 't' }),
      'cleanup',
    ],
    [
      'a deleted resource whose rows are gone',
      meta({ finalizers: ['other/x'], deletionTimestamp: 't' }),
      'ignore',
    ],
  ])('%s: %s', (_name, input, step) => {
    expect(decide(input).step).toBe(step);
  });

  it('shows relay propagation as applied/total', () => {
    expect(relaysSummary(2, 3)).toBe('2/3');
    expect(relaysSummary(0, 0)).toBe('-');
  });
});

describe('conditions', () => {
  const t1 = new Date('2026-01-01T00:00:00Z');
  const t2 = new Date('2026-01-01T00:05:00Z');

  it('keeps lastTransitionTime while the status stays, moves it when the status flips', () => {
    const first = setConditions(
      undefined,
      [{ type: 'Ready', status: 'False', reason: 'SecretNotFound', message: 'm' }],
      1,
      t1,
    );
    const same = setConditions(
      first,
      [{ type: 'Ready', status: 'False', reason: 'SecretKeyMissing', message: 'n' }],
      2,
      t2,
    );
    const flipped = setConditions(
      same,
      [{ type: 'Ready', status: 'True', reason: 'Applied', message: '' }],
      3,
      t2,
    );
    expect(first[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(same[0]).toMatchObject({
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'SecretKeyMissing',
      observedGeneration: 2,
    });
    expect(flipped[0]).toMatchObject({
      lastTransitionTime: '2026-01-01T00:05:00Z',
      status: 'True',
      observedGeneration: 3,
    });
  });

  it('compares conditions without their times, so an unchanged status is not written again', () => {
    const a = setConditions(
      undefined,
      [{ type: 'Ready', status: 'True', reason: 'Applied', message: '' }],
      1,
      t1,
    );
    const b = setConditions(
      undefined,
      [{ type: 'Ready', status: 'True', reason: 'Applied', message: '' }],
      1,
      t2,
    );
    expect(sameConditions(a, b)).toBe(true);
    expect(
      sameConditions(
        a,
        setConditions(a, [{ type: 'Ready', status: 'True', reason: 'Applied', message: '' }], 2, t2),
      ),
    ).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { roundQuota, truncateQuota } from './quota-math.ts';

/** The definition: cut to 15 significant digits, then round half up or truncate. */
const roundByDefinition = (value: number) => Math.round(Number(value.toPrecision(15)));
const truncateByDefinition = (value: number) => Math.trunc(Number(value.toPrecision(15)));

describe('quota rounding', () => {
  it('agrees with its definition on products of decimal ratios, near halves and whole numbers included', () => {
    const ratios = [
      0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 0.8, 1, 1.1, 1.25, 1.5, 2, 2.5, 3, 4, 7.5, 15, 37.5,
    ];
    const samples: number[] = [];
    for (const a of ratios)
      for (const b of ratios)
        for (const tokens of [1, 3, 7, 10, 33, 100, 333, 1000, 4096, 12_345, 1_000_000])
          samples.push(a * b * tokens);
    // Values right at and beside halves and whole numbers, as float noise leaves them.
    for (let whole = 0; whole < 2000; whole += 1)
      for (const offset of [
        -1e-9, -1e-12, 0, 1e-12, 1e-9, 0.4999999999999, 0.5, 0.5000000000001, 0.9999999999999,
      ])
        samples.push(Math.max(0, whole + offset));
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 20_000; i += 1) samples.push(random() * 10 ** Math.floor(random() * 13));
    for (const value of samples) {
      expect(roundQuota(value), `round ${value}`).toBe(roundByDefinition(value));
      expect(truncateQuota(value), `truncate ${value}`).toBe(truncateByDefinition(value));
    }
  });

  it('refuses what is not a finite number', () => {
    expect(() => roundQuota(Number.NaN)).toThrow(RangeError);
    expect(() => truncateQuota(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

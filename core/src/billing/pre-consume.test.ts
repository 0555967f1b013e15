import { describe, expect, it } from 'vitest';
import { decideReservation, estimateQuota } from './pre-consume.ts';
import type { Pricing } from './ratios.ts';

const QUOTA_PER_UNIT = 500_000;
const perToken = (modelRatio: number, groupRatio = 1): Pricing => ({
  kind: 'per-token',
  model: 'm',
  modelRatio,
  completionRatio: 4,
  cacheRatio: 1,
  cacheCreationRatio: 1.25,
  groupRatio,
  isUnsetRatio: false,
});
const perCall = (modelPrice: number, groupRatio = 1): Pricing => ({
  kind: 'per-call',
  model: 'm',
  modelPrice,
  groupRatio,
});

describe('estimateQuota', () => {
  it.each([
    // [case, pricing, prompt, maxTokens, expected]
    ['no max_tokens: PreConsumedQuota tokens × ratio (500 × 1.25)', perToken(1.25), 100, undefined, 625],
    ['max_tokens: (prompt + max) × ratio × group (1100 × 0.075 × 0.8)', perToken(0.075, 0.8), 100, 1000, 66],
    ['truncated, not rounded (13 × 0.25 = 3.25)', perToken(0.25), 10, 3, 3],
    ['max_tokens 0 counts as not given', perToken(1), 100, 0, 500],
    ['completion ratio not applied (110 × 1)', perToken(1), 10, 100, 110],
    ['per call: 0.04 USD × 500000', perCall(0.04), 100, 1000, 20_000],
    ['per call with group ratio: 0.1 × 500000 × 1.5', perCall(0.1, 1.5), 0, undefined, 75_000],
    ['free model', perToken(0), 100, 1000, 0],
  ])('%s', (_case, pricing, promptTokens, maxTokens, expected) => {
    expect(
      estimateQuota({
        pricing,
        promptTokens,
        maxTokens,
        preConsumedTokens: 500,
        quotaPerUnit: QUOTA_PER_UNIT,
      }),
    ).toBe(expected);
  });
});

describe('decideReservation', () => {
  const trustQuota = 10 * QUOTA_PER_UNIT;
  const limited = (remainQuota: number) => ({ unlimited: false, remainQuota });
  const unlimited = { unlimited: true, remainQuota: 0 };

  it('refuses a user with no quota left, even for a free model', () => {
    expect(decideReservation({ estimate: 0, userQuota: 0, token: unlimited, trustQuota })).toMatchObject({
      ok: false,
      code: 'insufficient_user_quota',
    });
  });

  it('refuses a user whose balance is below the estimate', () => {
    expect(decideReservation({ estimate: 625, userQuota: 624, token: unlimited, trustQuota })).toMatchObject({
      ok: false,
      code: 'insufficient_user_quota',
    });
  });

  it('refuses a limited token whose balance is below the estimate', () => {
    const result = decideReservation({ estimate: 625, userQuota: 10_000, token: limited(600), trustQuota });
    expect(result).toMatchObject({ ok: false, code: 'pre_consume_token_quota_failed' });
  });

  it('reserves the estimate from a modest balance', () => {
    expect(decideReservation({ estimate: 625, userQuota: 10_000, token: limited(625), trustQuota })).toEqual({
      ok: true,
      reserve: 625,
      trusted: false,
    });
  });

  it('reserves nothing for a user and token holding more than the trust quota', () => {
    expect(
      decideReservation({ estimate: 625, userQuota: trustQuota, token: limited(trustQuota), trustQuota }),
    ).toEqual({ ok: true, reserve: 0, trusted: true });
    expect(
      decideReservation({ estimate: 625, userQuota: trustQuota, token: unlimited, trustQuota }),
    ).toMatchObject({
      trusted: true,
    });
  });

  it('still reserves when only the user, not the limited token, is above the trust quota', () => {
    expect(
      decideReservation({ estimate: 625, userQuota: 100 * trustQuota, token: limited(1_000), trustQuota }),
    ).toMatchObject({ reserve: 625, trusted: false });
  });

  it('does not trust a balance under 100 × an expensive estimate even above the trust quota', () => {
    // 100 × 60 000 = 6 000 000 > 5 000 000 (the $10 trust quota)
    expect(
      decideReservation({ estimate: 60_000, userQuota: 5_999_999, token: unlimited, trustQuota }),
    ).toMatchObject({ reserve: 60_000, trusted: false });
    expect(
      decideReservation({ estimate: 60_000, userQuota: 6_000_000, token: unlimited, trustQuota }),
    ).toMatchObject({ reserve: 0, trusted: true });
  });

  it('bills the playground (no token) to the user alone', () => {
    expect(decideReservation({ estimate: 625, userQuota: 1_000, token: null, trustQuota })).toMatchObject({
      reserve: 625,
    });
  });

  it('can be told never to trust', () => {
    expect(
      decideReservation({
        estimate: 1,
        userQuota: 1e12,
        token: unlimited,
        trustQuota: Number.POSITIVE_INFINITY,
      }),
    ).toMatchObject({ reserve: 1, trusted: false });
  });
});

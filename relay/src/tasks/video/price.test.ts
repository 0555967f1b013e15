import { describe, expect, it } from 'vitest';
import {
  HIGH_RES_FACTOR,
  perSecondQuota,
  quotaForSeconds,
  refundForLength,
  sizeTierFactor,
} from './price.ts';

describe('video prices', () => {
  it('prices 720p frames at the model price and larger ones at OpenAI’s step above it', () => {
    expect(sizeTierFactor('sora-2-pro', '720x1280')).toBe(1);
    expect(sizeTierFactor('sora-2-pro', '1280x720')).toBe(1);
    expect(sizeTierFactor('sora-2-pro', '1024x1792')).toBe(HIGH_RES_FACTOR);
    expect(sizeTierFactor('sora-2-pro', '1792x1024')).toBe(HIGH_RES_FACTOR);
    // sora-2-pro: $0.30 a second at 720p is $0.50 at 1792x1024.
    expect(0.3 * sizeTierFactor('sora-2-pro', '1792x1024')).toBeCloseTo(0.5, 10);
    // Veo costs the same a second at 1080p.
    expect(sizeTierFactor('veo-3.1-generate-preview', '1920x1080')).toBe(1);
    // Seedance is priced by tokens: a 1080p second is 1920×1088 / 1248×704 of a 720p one.
    expect(sizeTierFactor('doubao-seedance-1-0-pro-250528', '1280x720')).toBe(1);
    expect(sizeTierFactor('doubao-seedance-1-0-pro-250528', '1920x1080')).toBeCloseTo(2.3776, 4);
    expect(sizeTierFactor('kling-v2-1', '1920x1080')).toBe(1);
  });

  it('charges seconds × price × group ratio × tier, truncated once', () => {
    const perSecond = perSecondQuota({
      model: 'sora-2',
      modelPrice: 0.1,
      groupRatio: 1.5,
      size: '720x1280',
      quotaPerUnit: 500_000,
    });
    expect(perSecond).toBeCloseTo(75_000, 6);
    expect(quotaForSeconds(perSecond, 12)).toBe(900_000);
    // $0.50 a second × 3 s: binary fractions never cost the caller a unit either way.
    const pro = perSecondQuota({
      model: 'sora-2-pro',
      modelPrice: 0.3,
      groupRatio: 1,
      size: '1024x1792',
      quotaPerUnit: 500_000,
    });
    expect(quotaForSeconds(pro, 3)).toBe(750_000);
    expect(
      quotaForSeconds(
        perSecondQuota({
          model: 'sora-2-pro',
          modelPrice: 0.07,
          groupRatio: 1,
          size: '720x1280',
          quotaPerUnit: 500_000,
        }),
        3,
      ),
    ).toBe(105_000);
  });

  it('gives back only the seconds not delivered, and never more than was charged', () => {
    expect(refundForLength(900_000, 75_000, 8)).toBe(300_000);
    expect(refundForLength(900_000, 75_000, 12)).toBe(0);
    // Longer than asked: not charged more, nothing back.
    expect(refundForLength(900_000, 75_000, 20)).toBe(0);
    // Unknown length: the charge stands.
    expect(refundForLength(900_000, 75_000, undefined)).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { trainingPriceOf } from './training-prices.ts';

describe('training prices', () => {
  it("are OpenAI's page: gpt-4o-mini $3.00 and gpt-4o $25.00 per 1M training tokens, dated names included", () => {
    expect(trainingPriceOf('gpt-4o-mini-2024-07-18')).toBe(3);
    expect(trainingPriceOf('gpt-4o-2024-08-06')).toBe(25);
    expect(trainingPriceOf('gpt-4.1-nano-2025-04-14')).toBe(1.5);
  });

  it('are unknown for a model the page does not list', () => {
    expect(trainingPriceOf('claude-sonnet-4-5')).toBeUndefined();
    expect(trainingPriceOf('o3-mini')).toBeUndefined();
  });
});

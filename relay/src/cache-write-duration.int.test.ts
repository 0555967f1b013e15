/**
 * Claude cache writes billed by how long the cache keeps them (issue 39): Anthropic prices a 5-minute cache write
 * at 1.25 × input and a 1-hour one at 2 × input, and reports them apart in `usage.cache_creation`. Every expected
 * quota below is worked out by hand from Anthropic's published prices, not from the project's ratio tables:
 *
 * https://docs.anthropic.com/en/docs/about-claude/pricing, Claude Sonnet 4.5 (prompts ≤ 200K tokens), USD per
 * million tokens: input $3, 5-minute cache write $3.75, 1-hour cache write $6, cache hit $0.30, output $15;
 * 1 USD = 500,000 quota.
 *
 * The answers' `usage` is shaped as Anthropic documents it (testing/claude-cache-usage.ts: 1,000 input, 1,000
 * written to a 1-hour cache, 1,000 to a 5-minute cache, 3,000 read, 500 output), and reaches
 * the relay directly, through Bedrock InvokeModel and through Vertex AI rawPredict, for Anthropic, OpenAI chat,
 * OpenAI Responses and Gemini clients, streamed and not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLIT_CACHE_USAGE, UNSPLIT_CACHE_USAGE } from './testing/claude-cache-usage.ts';
import {
  type ClientShape,
  chargeOf,
  EVERY_CLIENT,
  type GoldenRelay,
  CLAUDE_SONNET_45 as MODEL,
  CLAUDE_ROUTES as ROUTES,
  type ClaudeRoute as Route,
  startGoldenRelay,
} from './testing/golden-calls.ts';

/**
 * 1000 × $3 + 1000 × $6 + 1000 × $3.75 + 3000 × $0.30 + 500 × $15 = $21,150 per million requests
 * = $0.02115 per request × 500,000 = 10,575 quota.
 */
const SPLIT_QUOTA = 10_575;
/** 1000 × $3 + 2000 × $3.75 + 3000 × $0.30 + 500 × $15 = $18,900 per million = $0.0189 × 500,000 = 9,450 quota. */
const UNSPLIT_QUOTA = 9_450;

/** The relay, its fakes, and a caller per way to Claude (its channel is the only one of its group). */
let golden: GoldenRelay;

beforeAll(async () => {
  golden = await startGoldenRelay({ groups: ROUTES });
});

afterAll(async () => {
  await golden?.close();
});

/** The consume log of a call of the route's caller, once the balance shows it (golden-calls.ts). */
const charged = (route: Route, shape: ClientShape) =>
  chargeOf(golden.t, golden.callerOf(route).userId, () => golden.calls[shape](route, MODEL));

describe('Claude cache writes by duration (Sonnet 4.5 at Anthropic published prices)', () => {
  for (const route of ROUTES) {
    for (const shape of EVERY_CLIENT) {
      it(`bills 1-hour writes at $6 and 5-minute writes at $3.75 per million: ${shape} via ${route}`, async () => {
        golden.providers.setBehaviour({ anthropicUsage: SPLIT_CACHE_USAGE });
        const { quota, other } = await charged(route, shape);
        expect(quota).toBe(SPLIT_QUOTA);
        // The log names both parts, so the charge can be checked by hand.
        expect(other).toMatchObject({
          cache_tokens: 3000,
          cache_creation_tokens: 2000,
          cache_creation_tokens_5m: 1000,
          cache_creation_ratio_5m: 1.25,
          cache_creation_tokens_1h: 1000,
          cache_creation_ratio_1h: 2,
        });
      });
    }
  }

  for (const route of ROUTES) {
    for (const shape of [
      'Anthropic Messages',
      'Anthropic Messages, streamed',
      'OpenAI chat completions',
    ] as const) {
      it(`bills an answer without the split as 5-minute writes: ${shape} via ${route}`, async () => {
        golden.providers.setBehaviour({ anthropicUsage: UNSPLIT_CACHE_USAGE });
        const { quota, other } = await charged(route, shape);
        expect(quota).toBe(UNSPLIT_QUOTA);
        expect(other).toMatchObject({ cache_creation_tokens_5m: 2000, cache_creation_tokens_1h: 0 });
      });
    }
  }
});

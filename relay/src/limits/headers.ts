/**
 * The headers of a refused request (docs/adr/0028): `Retry-After`, OpenAI's `x-ratelimit-limit|remaining|reset-
 * requests|tokens` (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers), the same for
 * concurrency, and for Anthropic clients `anthropic-ratelimit-requests|tokens-limit|remaining|reset`
 * (https://docs.anthropic.com/en/api/rate-limits#response-headers). Each kind reports its tightest counter.
 */
import { LimitKind } from '@turnpike/core/options/rate-limits';
import type { CounterResult } from './counters.ts';
import type { Check } from './limiter.ts';

/** OpenAI's duration format: "1s", "6m0s", "250ms". */
export function formatReset(ms: number): string {
  if (ms < 1000) return `${Math.max(1, Math.ceil(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

interface Level {
  readonly check: Check;
  readonly remaining: number;
}

export function limitHeaders(input: {
  rateChecks: readonly Check[];
  slotChecks: readonly Check[];
  result: Extract<CounterResult, { ok: false }>;
  refused: Check;
  isAnthropic: boolean;
  now?: number;
}): Record<string, string> {
  const { result, refused } = input;
  const levels: Level[] = [
    ...input.rateChecks.map((check, i) => ({
      check,
      remaining: Math.max(0, check.limit - (result.rateUsed[i] ?? 0)),
    })),
    ...input.slotChecks.map((check, i) => ({
      check,
      remaining: Math.max(0, check.limit - (result.slotsHeld[i] ?? 0)),
    })),
  ];
  const tightest = (kind: LimitKind): Level | undefined => {
    if (refused.kind === kind) return levels.find((l) => l.check === refused);
    return levels
      .filter((l) => l.check.kind === kind)
      .reduce<Level | undefined>((best, l) => (best && best.remaining <= l.remaining ? best : l), undefined);
  };
  const retrySeconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
  const headers: Record<string, string> = { 'retry-after': String(retrySeconds) };
  const names: Record<LimitKind, string> = {
    requests: 'requests',
    tokens: 'tokens',
    concurrency: 'concurrency',
  };
  const resetAt = new Date((input.now ?? Date.now()) + result.retryAfterMs)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
  for (const kind of Object.values(LimitKind)) {
    const level = tightest(kind);
    if (!level) continue;
    const isRefused = level.check === refused;
    const remaining = isRefused && kind !== LimitKind.Tokens ? 0 : level.remaining;
    headers[`x-ratelimit-limit-${names[kind]}`] = String(level.check.limit);
    headers[`x-ratelimit-remaining-${names[kind]}`] = String(remaining);
    if (isRefused) headers[`x-ratelimit-reset-${names[kind]}`] = formatReset(result.retryAfterMs);
    if (input.isAnthropic && kind !== LimitKind.Concurrency) {
      headers[`anthropic-ratelimit-${names[kind]}-limit`] = String(level.check.limit);
      headers[`anthropic-ratelimit-${names[kind]}-remaining`] = String(remaining);
      if (isRefused) headers[`anthropic-ratelimit-${names[kind]}-reset`] = resetAt;
    }
  }
  return headers;
}

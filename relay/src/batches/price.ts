/**
 * What a batch costs (docs/adr/0050). A line sent to a provider's Batch API is billed at the batch price
 * (`settleBatchTokens`: the model's `batch` service tier, half the standard price by default); a line the gateway
 * runs itself at the normal price. The hold taken when a batch is accepted is the sum over its lines of the bill of
 * the line's counted prompt (with a margin) and its output limit: an upper bound of what the upstream can serve.
 */

import type { Pricing } from '@turnpike/core/billing/ratios';
import { type Settlement, settleBatchTokens, settleTokens } from '@turnpike/core/billing/settle';
import type { NormalisedUsage } from '../contract.ts';
import { type CountableMessage, countChatPromptTokens, countInputTokens } from '../metering/tokens.ts';
import type { BatchLine } from './input.ts';

/** How a batch runs: through OpenAI's or Azure's Batch API, Anthropic's Message Batches, or the gateway itself. */
export type BatchMode = 'openai' | 'anthropic' | 'gateway';

/** Output tokens held for a line that names no limit. */
export const DEFAULT_LINE_OUTPUT_TOKENS = 4096;

/** Whether the mode bills at the provider's batch price. */
export const isBatchPriced = (mode: BatchMode): boolean => mode !== 'gateway';

/** A line's bill from its usage, at the batch's price. */
export function lineSettlement(
  pricing: Pricing,
  mode: BatchMode,
  usage: NormalisedUsage,
  quotaPerUnit: number,
): Settlement {
  return isBatchPriced(mode)
    ? settleBatchTokens(pricing, usage, quotaPerUnit)
    : settleTokens(pricing, usage, quotaPerUnit);
}

const whole = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;

/** The output limit a line names (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), if any. */
export function outputLimitOf(body: Readonly<Record<string, unknown>>): number | undefined {
  return whole(body.max_completion_tokens) ?? whole(body.max_tokens) ?? whole(body.max_output_tokens);
}

/** Prompt tokens of a line, counted as the relay counts a call's. */
export function promptTokensOf(line: BatchLine): number {
  const { body } = line;
  const model = String(body.model);
  if (Array.isArray(body.messages))
    return countChatPromptTokens(
      model,
      body.messages as CountableMessage[],
      Array.isArray(body.tools) ? body.tools : [],
    );
  if (body.input !== undefined)
    return typeof body.input === 'string' || Array.isArray(body.input)
      ? countInputTokens(model, body.input) +
          (Array.isArray(body.input) ? JSON.stringify(body.input).length : 0)
      : JSON.stringify(body.input).length;
  return countInputTokens(model, body.prompt);
}

/** The hold of a batch: each line billed at its counted prompt (+10% and 16 tokens) and its output limit. */
export function estimateBatch(
  pricing: Pricing,
  mode: BatchMode,
  lines: readonly BatchLine[],
  quotaPerUnit: number,
): number {
  let total = 0;
  for (const line of lines) {
    const prompt = Math.ceil(promptTokensOf(line) * 1.1) + 16;
    const output =
      line.url === '/v1/embeddings' || line.url === '/v1/moderations'
        ? 0
        : (outputLimitOf(line.body) ?? DEFAULT_LINE_OUTPUT_TOKENS);
    const usage = {
      promptTokens: prompt,
      completionTokens: output,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      audioInputTokens: 0,
      audioOutputTokens: 0,
      reasoningTokens: 0,
      source: 'counted' as const,
    };
    total += lineSettlement(pricing, mode, usage, quotaPerUnit).quota;
  }
  return total;
}

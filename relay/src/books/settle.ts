/**
 * Settlement and the consume log (reference §4.9, §5.4): the one place a hold is turned into a charge, idempotent
 * per request, so every exit path (success, upstream error, client disconnect, exception) can call it and exactly
 * one of them bills. The charge leaves the ledger's hold at once and reaches the database with its consume log and
 * counters in one batched transaction (writer.ts), so a charge never exists without its log (docs/adr/0016).
 */

import type { Hold } from '@turnpike/core/billing/ledger';
import {
  AUDIO_COMPLETION_RATIO,
  isAudioModel,
  lookupAudioRatio,
  type Pricing,
} from '@turnpike/core/billing/ratios';
import { type Settlement, settleAudio, settleTokens, shapeLogFields } from '@turnpike/core/billing/settle';
import { LogType } from '@turnpike/core/domain/logs';
import type { Json, NormalisedUsage, RelayRequest } from '../contract.ts';
import { reasoningEffortOf } from '../formats/openai/reasoning.ts';
import type { LimitTicket } from '../limits/limiter.ts';
import { EMPTY_USAGE } from '../metering/usage.ts';
import { BillingAdjustmentReason } from '../metrics/relay-metrics.ts';
import { markAttempt, markStep, type StepMarks } from '../metrics/tracing.ts';
import { providerFor } from '../providers/registry.ts';
import type { Caller } from '../state/auth-cache.ts';
import { drawsOnWallet, type Payer, type SettlementContext as RelayContext } from './settlement-context.ts';

/** Per-request bookkeeping shared by the attempt loop and the settlement. */
export interface Billing {
  readonly payer: Payer;
  readonly pricing: Pricing;
  /** The estimate held on the ledger since admission (billing.ts). */
  readonly hold: Hold;
  /** Step marks for the call's trace; undefined while tracing is off. */
  readonly steps?: StepMarks | undefined;
  /** A bill fixed before the call (images): charged as is once the upstream answered, whatever the usage. */
  readonly fixedQuota: number | undefined;
  settled: boolean;
  /** Limit admissions (the request's, the answering channel's) corrected with the real usage when settled. */
  readonly limits?: LimitTicket[];
}

/** What one successful (or partly successful) attempt produced. */
export interface SettleOutcome {
  readonly usage: NormalisedUsage | undefined;
  readonly channelId: number;
  readonly usedChannels: readonly number[];
  readonly upstreamModel: string;
  readonly isStream: boolean;
  readonly frtMs: number | undefined;
  readonly startedAt: number;
  /** When the answering attempt was sent upstream (`performance.now()`). */
  readonly upstreamSentAt: number;
  /** Time spent on upstreams by the failed attempts before it. */
  readonly upstreamMsBefore: number;
  /** Appended to the log line (image size and quality, how audio was measured, ...). */
  readonly note?: string;
  /** Extra fields of the log's `other` JSON. */
  readonly other?: Json;
  /** The service tier the answer's headers name (Gemini's), billed when the usage names none (docs/adr/0042). */
  readonly serviceTier?: string;
}

/** Why a hold did not simply become its bill, for `turnpike_billing_adjustments_total`. */
function adjustmentOf(
  outcome: SettleOutcome | undefined,
  isEmpty: boolean,
): BillingAdjustmentReason | undefined {
  if (outcome === undefined) return BillingAdjustmentReason.Refund;
  const ending = (outcome.other as { stream_end?: unknown } | undefined)?.stream_end;
  if (ending === 'client_gone') return BillingAdjustmentReason.ClientGone;
  if (ending === 'upstream_error' || ending === 'cut_off' || ending === 'timeout')
    return BillingAdjustmentReason.UpstreamError;
  return isEmpty ? BillingAdjustmentReason.MissingUsage : undefined;
}

/** The audio ratios a bill was figured with; undefined when the text formula applied. */
interface AudioRatios {
  readonly audioRatio: number;
  readonly audioCompletionRatio: number;
}

/**
 * The bill of a usage report. Audio tokens cost more than text ones, so a per-token request whose model is an audio
 * model (`gpt-4o-audio*`, as the reference chooses) or whose usage reports audio tokens at all is settled with the
 * audio formula: audio input at the model's audio ratio, audio output at that times the audio completion ratio, and
 * only the rest as text. The text formula would bill the audio tokens once, as text.
 */
function billUsage(
  pricing: Pricing,
  usage: NormalisedUsage,
  quotaPerUnit: number,
): Settlement & { readonly audio?: AudioRatios } {
  const hasAudio = usage.audioInputTokens > 0 || usage.audioOutputTokens > 0;
  if (pricing.kind === 'per-call' || !(hasAudio || isAudioModel(pricing.model))) {
    return settleTokens(pricing, usage, quotaPerUnit);
  }
  const audio = { audioRatio: lookupAudioRatio(pricing.model), audioCompletionRatio: AUDIO_COMPLETION_RATIO };
  return {
    ...settleAudio(pricing, usage, audio.audioRatio, quotaPerUnit, audio.audioCompletionRatio),
    audio,
  };
}

/** The usage with the service tier the answer's headers named, when its body named none. */
const servedUsage = (usage: NormalisedUsage, headerTier: string | undefined): NormalisedUsage =>
  headerTier === undefined || usage.serviceTier !== undefined ? usage : { ...usage, serviceTier: headerTier };

/** The OpenTelemetry `gen_ai.provider.name` of the channel that answered. */
function providerOf(ctx: RelayContext, channelId: number): string {
  const channel = ctx.channels.get(channelId);
  return (channel && providerFor(channel.type)?.genAiName) || 'openai';
}

/**
 * Settles the reservation: with `outcome` undefined everything reserved comes back (nothing was produced);
 * otherwise the bill from the usage (or the fixed bill) is taken and the consume log written through the
 * batching writer. Returns the quota charged.
 */
export async function settle(
  ctx: RelayContext,
  request: RelayRequest,
  caller: Caller,
  billing: Billing,
  outcome: SettleOutcome | undefined,
): Promise<number> {
  if (billing.settled) return 0;
  billing.settled = true;
  const used = outcome?.usage ? outcome.usage.promptTokens + outcome.usage.completionTokens : 0;
  for (const ticket of billing.limits ?? []) ticket.settle(used);
  const { options } = ctx.deps;
  const quotaPerUnit = options.get('QuotaPerUnit');
  const settlement: Pick<Settlement, 'quota' | 'isEmpty' | 'shapes'> & { readonly audio?: AudioRatios } =
    outcome === undefined
      ? { quota: 0, isEmpty: true }
      : billing.fixedQuota !== undefined
        ? { quota: billing.fixedQuota, isEmpty: false }
        : outcome.usage === undefined
          ? { quota: 0, isEmpty: true }
          : billUsage(billing.pricing, servedUsage(outcome.usage, outcome.serviceTier), quotaPerUnit);
  const { payer } = billing;
  if (outcome) {
    markAttempt(billing.steps, outcome.channelId, outcome.upstreamSentAt, false);
    markStep(billing.steps, 'answer');
  }
  // A call that produced something counts in requests windows; one refunded or empty does not (reference §5.4).
  const result = await ctx.ledger.settle(billing.hold, settlement.quota, !settlement.isEmpty);
  const adjustment = adjustmentOf(outcome, settlement.isEmpty);
  if (adjustment && billing.hold.amount > 0) ctx.metrics.recordBillingAdjustment(adjustment);
  if (outcome === undefined) return 0;
  const { pricing } = billing;
  const usage = outcome.usage ?? EMPTY_USAGE;
  const other: Json = {
    model_ratio: pricing.kind === 'per-token' ? pricing.modelRatio : 0,
    group_ratio: pricing.groupRatio,
    completion_ratio: pricing.kind === 'per-token' ? pricing.completionRatio : 0,
    cache_tokens: usage.cachedTokens,
    cache_ratio: pricing.kind === 'per-token' ? pricing.cacheRatio : 0,
    model_price: pricing.kind === 'per-call' ? pricing.modelPrice : -1,
    frt: outcome.frtMs ?? -1000,
    admin_info: { use_channel: outcome.usedChannels.map(String) },
    ...outcome.other,
    // The long-context tier, service tier and fees the bill applied (docs/adr/0042), for the console's details.
    ...shapeLogFields(settlement.shapes),
  };
  if (usage.cacheWriteTokens > 0 && pricing.kind === 'per-token') {
    other.cache_creation_tokens = usage.cacheWriteTokens;
    other.cache_creation_ratio = pricing.cacheCreationRatio;
    // The writes by how long the cache keeps them, each with its own price, so a charge can be checked by hand.
    other.cache_creation_tokens_5m = usage.cacheWriteTokens - usage.cacheWrite1hTokens;
    other.cache_creation_ratio_5m = pricing.cacheCreationRatio;
    other.cache_creation_tokens_1h = usage.cacheWrite1hTokens;
    other.cache_creation_ratio_1h = pricing.cacheCreation1hRatio;
  }
  if (settlement.audio) {
    // The reference's audio log fields (the console's log details show them).
    other.audio = true;
    other.audio_input = usage.audioInputTokens;
    other.audio_output = usage.audioOutputTokens;
    other.text_input = usage.promptTokens - usage.audioInputTokens;
    other.text_output = usage.completionTokens - usage.audioOutputTokens;
    other.audio_ratio = settlement.audio.audioRatio;
    other.audio_completion_ratio = settlement.audio.audioCompletionRatio;
  }
  if (outcome.upstreamModel !== pricing.model) {
    other.is_model_mapped = true;
    other.upstream_model_name = outcome.upstreamModel;
  }
  const effort = reasoningEffortOf(request.body, outcome.upstreamModel);
  if (effort !== undefined) other.reasoning_effort = effort;
  if (result.shortfall > 0) other.shortfall = result.shortfall;
  // Paid by a plan's allowance, not the wallet (docs/adr/0049): the reference's field, shown in the log details.
  if (!drawsOnWallet(billing.hold)) other.billing_source = 'subscription';
  if (usage.source === 'counted') other.usage_counted = true;
  let content =
    pricing.kind === 'per-token'
      ? `model ratio ${pricing.modelRatio.toFixed(2)}, completion ratio ${pricing.completionRatio.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`
      : `model price ${pricing.modelPrice.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`;
  if (outcome.note) content += `, ${outcome.note}`;
  if (settlement.isEmpty) content += ' (the upstream reported no tokens: possibly a timeout)';
  markStep(billing.steps, 'settle');
  const now = performance.now();
  ctx.metrics.recordCall({
    route: request.routeOptions.url ?? request.url,
    model: pricing.model,
    requestId: request.id,
    steps: billing.steps,
    servedModel: outcome.upstreamModel,
    provider: providerOf(ctx, outcome.channelId),
    cacheReadTokens: usage.cachedTokens,
    cacheCreationTokens: usage.cacheWriteTokens,
    reasoningTokens: usage.reasoningTokens,
    channelId: outcome.channelId,
    status: 200,
    isStream: outcome.isStream,
    totalMs: now - outcome.startedAt,
    upstreamMs: outcome.upstreamMsBefore + (now - outcome.upstreamSentAt),
    frtMs: outcome.frtMs,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    quota: result.charged,
  });
  ctx.writer.add({
    userId: caller.user.id,
    tokenId: caller.token.id,
    channelId: outcome.channelId,
    quota: result.charged,
    countRequest: !settlement.isEmpty,
    debit:
      result.charged > 0
        ? {
            quota: result.charged,
            fromToken: !payer.tokenUnlimited,
            ...(drawsOnWallet(billing.hold) ? {} : { fromUser: false }),
          }
        : undefined,
    windows: result.windows,
    log: options.get('LogConsumeEnabled')
      ? {
          userId: caller.user.id,
          createdAt: Math.floor(Date.now() / 1000),
          type: LogType.Consume,
          content,
          username: caller.user.username,
          tokenName: caller.token.name,
          modelName: pricing.model,
          quota: result.charged,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          useTime: Math.round((now - outcome.startedAt) / 1000),
          isStream: outcome.isStream,
          channelId: outcome.channelId,
          tokenId: caller.token.id,
          group: caller.group,
          ip: request.ip,
          requestId: request.id,
          other: JSON.stringify(other),
        }
      : undefined,
  });
  return result.charged;
}

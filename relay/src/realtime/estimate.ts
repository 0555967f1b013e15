/**
 * The most one realtime response may cost, held before it starts (docs/adr/0032): every input token at the audio
 * price (a session mixes text and audio, and audio is the dearer), and its output at the limit the relay set on it.
 */
import { lookupAudioRatio, type Pricing } from '@turnpike/core/billing/ratios';
import { settleAudio, settleTokens } from '@turnpike/core/billing/settle';

export function estimateResponse(
  pricing: Pricing,
  inputTokens: number,
  outputCap: number,
  quotaPerUnit: number,
): number {
  const usage = {
    promptTokens: inputTokens,
    completionTokens: outputCap,
    audioInputTokens: inputTokens,
    audioOutputTokens: outputCap,
  };
  return pricing.kind === 'per-token'
    ? settleAudio(pricing, usage, lookupAudioRatio(pricing.model), quotaPerUnit).quota
    : settleTokens(pricing, usage, quotaPerUnit).quota;
}

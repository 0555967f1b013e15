/** The providers' own Batch APIs a batch can run through, by the mode its channel's type gives it. */
import { anthropicBatchApi } from './anthropic-batch-api.ts';
import { openAiBatchApi } from './openai-batch-api.ts';
import type { BatchMode } from './price.ts';
import type { BatchApi } from './upstream.ts';

export function batchApiOf(mode: BatchMode): BatchApi | undefined {
  if (mode === 'openai') return openAiBatchApi;
  if (mode === 'anthropic') return anthropicBatchApi;
  return undefined;
}

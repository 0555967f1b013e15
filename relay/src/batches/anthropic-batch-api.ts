/**
 * Anthropic's Message Batches API (https://docs.anthropic.com/en/api/creating-message-batches): the lines, each a
 * chat completion request converted to a Messages request (formats/anthropic/chat.ts), are sent as
 * `POST /v1/messages/batches { requests: [{ custom_id, params }] }`; the batch is read with
 * `GET /v1/messages/batches/{id}` (`processing_status` in_progress / canceling / ended, `request_counts`,
 * `results_url`), cancelled with `POST …/{id}/cancel`, and its results read from `results_url` as JSON Lines of
 * `{ custom_id, result: { type: succeeded | errored | canceled | expired, message | error } }`
 * (https://docs.anthropic.com/en/api/retrieving-message-batch-results). Succeeded lines become OpenAI output lines
 * holding a `chat.completion`; the others become error lines.
 */

import type { NormalisedUsage } from '../contract.ts';
import { chatToMessages, messagesToChat } from '../formats/anthropic/chat.ts';
import { baseUrlOf } from '../providers/provider.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import {
  type BatchApi,
  callUpstream,
  countOf,
  jsonLines,
  jsonOf,
  type OutputLine,
  type UpstreamState,
} from './upstream.ts';

const ANTHROPIC_VERSION = '2023-06-01';

function headersOf(channel: RelayChannel): Record<string, string> {
  return {
    ...channel.headers,
    'x-api-key': channel.key ?? '',
    'anthropic-version': ANTHROPIC_VERSION,
  };
}

const urlOf = (channel: RelayChannel, path: string) => `${baseUrlOf(channel)}/v1/messages/batches${path}`;

/** Anthropic's processing status in OpenAI's words, from the counts once it ended. */
function stateOf(batch: Record<string, unknown>): UpstreamState {
  const counts = (batch.request_counts ?? {}) as Record<string, unknown>;
  const succeeded = countOf(counts.succeeded);
  const failed = countOf(counts.errored) + countOf(counts.canceled) + countOf(counts.expired);
  const processing = batch.processing_status;
  let status = 'in_progress';
  if (processing === 'canceling') status = 'cancelling';
  else if (processing === 'ended') {
    const wasCancelled = typeof batch.cancel_initiated_at === 'string';
    status = wasCancelled
      ? 'cancelled'
      : countOf(counts.expired) > 0 && succeeded === 0
        ? 'expired'
        : 'completed';
  }
  return {
    status,
    completed: succeeded,
    failed,
    outputRef: typeof batch.results_url === 'string' ? batch.results_url : undefined,
  };
}

export const anthropicBatchApi: BatchApi = {
  async submit(channel, dispatcher, batch) {
    const { options } = batch;
    const requests = batch.lines.map((line) => ({
      custom_id: line.customId,
      params: chatToMessages({ ...line.body, model: batch.upstreamModel }, batch.upstreamModel, options),
    }));
    const created = jsonOf(
      await callUpstream(
        dispatcher,
        urlOf(channel, ''),
        {
          method: 'POST',
          headers: { ...headersOf(channel), 'content-type': 'application/json' },
          body: JSON.stringify({ requests }),
        },
        'creating a message batch',
      ),
    );
    if (typeof created.id !== 'string')
      throw new Error('the upstream answered a message batch without an id');
    return { upstreamId: created.id, upstreamFileId: '' };
  },

  async state(channel, dispatcher, upstreamId) {
    const text = await callUpstream(
      dispatcher,
      urlOf(channel, `/${encodeURIComponent(upstreamId)}`),
      { method: 'GET', headers: headersOf(channel) },
      'reading a message batch',
    );
    return stateOf(jsonOf(text));
  },

  async cancel(channel, dispatcher, upstreamId) {
    await callUpstream(
      dispatcher,
      urlOf(channel, `/${encodeURIComponent(upstreamId)}/cancel`),
      { method: 'POST', headers: headersOf(channel) },
      'cancelling a message batch',
    );
  },

  async results(channel, dispatcher, state, model) {
    const output: OutputLine[] = [];
    const errors: OutputLine[] = [];
    const usage = new Map<string, NormalisedUsage>();
    if (!state.outputRef) return { output, errors, usage };
    const text = await callUpstream(
      dispatcher,
      state.outputRef,
      { method: 'GET', headers: headersOf(channel) },
      'reading message batch results',
    );
    for (const [index, line] of jsonLines(text).entries()) {
      const customId = typeof line.custom_id === 'string' ? line.custom_id : '';
      const result = (line.result ?? {}) as Record<string, unknown>;
      const id = `batch_req_${index}`;
      if (result.type === 'succeeded' && typeof result.message === 'object' && result.message !== null) {
        const chat = messagesToChat(result.message as Record<string, unknown>, model);
        if (chat.usage) usage.set(customId, chat.usage);
        output.push({
          id,
          custom_id: customId,
          response: {
            status_code: 200,
            request_id: String((result.message as { id?: unknown }).id ?? ''),
            body: chat.answer,
          },
          error: null,
        });
        continue;
      }
      const inner = (result.error ?? {}) as { error?: { type?: unknown; message?: unknown } };
      const type = typeof result.type === 'string' ? result.type : 'errored';
      errors.push({
        id,
        custom_id: customId,
        response: null,
        error: {
          code: type === 'errored' ? String(inner.error?.type ?? 'api_error') : `request_${type}`,
          message: typeof inner.error?.message === 'string' ? inner.error.message : `the request was ${type}`,
        },
      });
    }
    return { output, errors, usage };
  },
};

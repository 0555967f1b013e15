/**
 * Cohere's v2 chat (https://docs.cohere.com/reference/chat, https://docs.cohere.com/reference/chat-stream), a wire
 * of Cohere's own reached through the canonical chat shape. The request is nearly OpenAI's (`messages` with
 * `tool_calls` and `tool_call_id`, `tools` as functions); `top_p` is `p`, `stop` is `stop_sequences`. The answer's
 * `message.content` is a list of text blocks with `tool_calls` and a `tool_plan` beside them, `finish_reason` in
 * capitals (`COMPLETE`, `MAX_TOKENS`, `TOOL_CALL`, ...), usage in `usage.tokens` (what was used) and
 * `usage.billed_units`. The stream's events: `message-start`, `content-delta`, `tool-plan-delta`,
 * `tool-call-start`, `tool-call-delta`, `message-end` (the finish reason and the usage).
 */

import type { NormalisedUsage } from '../../contract.ts';
import {
  asNumber,
  asString,
  type ChatAnswer,
  chatChunk,
  chatCompletion,
  contentText,
  isRecord,
  type Json,
  nowSeconds,
} from '../../formats/canonical.ts';
import type { DecodedEvent, Format, StreamDecoder } from '../../formats/format.ts';
import { openAiFormat } from '../../formats/openai/format.ts';
import { EMPTY_USAGE, toOpenAiUsageCounts } from '../../metering/usage.ts';
import { eventRecord, type SseEvent } from '../../sse.ts';

const FINISH: Readonly<Record<string, string>> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'stop',
  TIMEOUT: 'length',
};

/** A canonical chat request as Cohere's v2 chat request. */
export function chatToCohere(chat: Readonly<Json>, model: string, isStream: boolean): Json {
  const messages = (Array.isArray(chat.messages) ? chat.messages : []).filter(isRecord).map((message) => {
    const role = message.role === 'developer' ? 'system' : message.role;
    const out: Json = { role, content: contentText(message.content) };
    if (role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      out.tool_calls = message.tool_calls;
      if (out.content === '') delete out.content;
    }
    if (role === 'tool') out.tool_call_id = message.tool_call_id;
    return out;
  });
  const body: Json = { model, messages, stream: isStream };
  const maxTokens = asNumber(chat.max_completion_tokens) ?? asNumber(chat.max_tokens);
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (asNumber(chat.temperature) !== undefined) body.temperature = chat.temperature;
  if (asNumber(chat.top_p) !== undefined) body.p = chat.top_p;
  if (asNumber(chat.seed) !== undefined) body.seed = chat.seed;
  if (typeof chat.stop === 'string') body.stop_sequences = [chat.stop];
  else if (Array.isArray(chat.stop)) body.stop_sequences = chat.stop;
  if (Array.isArray(chat.tools) && chat.tools.length > 0 && chat.tool_choice !== 'none')
    body.tools = chat.tools;
  if (chat.tool_choice === 'required') body.tool_choice = 'REQUIRED';
  return body;
}

/** Cohere's usage: the tokens used (`usage.tokens`), else the billed units. */
export function cohereUsageOf(usage: unknown): NormalisedUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const counts = isRecord(usage.tokens)
    ? usage.tokens
    : isRecord(usage.billed_units)
      ? usage.billed_units
      : undefined;
  if (!counts) return undefined;
  const input = asNumber(counts.input_tokens);
  const output = asNumber(counts.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  return { ...EMPTY_USAGE, promptTokens: input ?? 0, completionTokens: output ?? 0, source: 'upstream' };
}

export function cohereToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  const message = isRecord(answer.message) ? answer.message : {};
  const text = (Array.isArray(message.content) ? message.content : [])
    .filter(isRecord)
    .map((block) => (block.type === 'text' ? (asString(block.text) ?? '') : ''))
    .join('');
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const usage = cohereUsageOf(answer.usage);
  const chatMessage: Json = { role: 'assistant', content: text };
  if (typeof message.tool_plan === 'string' && message.tool_plan)
    chatMessage.reasoning_content = message.tool_plan;
  if (calls.length > 0) chatMessage.tool_calls = calls;
  return {
    answer: chatCompletion(
      asString(answer.id) ?? `chatcmpl-cohere-${nowSeconds()}`,
      model,
      chatMessage,
      FINISH[asString(answer.finish_reason) ?? ''] ?? 'stop',
      usage && toOpenAiUsageCounts(usage),
    ),
    usage,
  };
}

export function createCohereDecoder(model: string): StreamDecoder {
  let id = `chatcmpl-cohere-${nowSeconds()}`;
  const created = nowSeconds();
  let usage: NormalisedUsage | undefined;
  let calls = 0;
  const chunk = (delta: Json, finish: string | null = null) => chatChunk(id, model, created, delta, finish);
  return {
    usage: () => usage,
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return { chunks: [] };
      const delta = isRecord(payload.delta) ? payload.delta : {};
      const message = isRecord(delta.message) ? delta.message : {};
      switch (payload.type ?? event.event) {
        case 'message-start':
          id = asString(payload.id) ?? id;
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        case 'content-delta': {
          const text = isRecord(message.content) ? asString(message.content.text) : undefined;
          return { chunks: text ? [chunk({ content: text })] : [] };
        }
        case 'tool-plan-delta': {
          const plan = asString(message.tool_plan);
          return { chunks: plan ? [chunk({ reasoning_content: plan })] : [] };
        }
        case 'tool-call-start': {
          const call = isRecord(message.tool_calls) ? message.tool_calls : {};
          const fn = isRecord(call.function) ? call.function : {};
          const index = calls;
          calls += 1;
          return {
            chunks: [
              chunk({
                tool_calls: [
                  {
                    index,
                    id: asString(call.id) ?? `call_${index}`,
                    type: 'function',
                    function: { name: asString(fn.name) ?? '', arguments: asString(fn.arguments) ?? '' },
                  },
                ],
              }),
            ],
          };
        }
        case 'tool-call-delta': {
          const call = isRecord(message.tool_calls) ? message.tool_calls : {};
          const fn = isRecord(call.function) ? call.function : {};
          const args = asString(fn.arguments);
          return {
            chunks: args
              ? [chunk({ tool_calls: [{ index: Math.max(0, calls - 1), function: { arguments: args } }] })]
              : [],
          };
        }
        case 'message-end':
          usage = cohereUsageOf(delta.usage) ?? usage;
          return {
            chunks: [chunk({}, FINISH[asString(delta.finish_reason) ?? ''] ?? 'stop')],
            finished: true,
          };
        default:
          return { chunks: [] };
      }
    },
  };
}

export const cohereFormat: Format = {
  id: 'cohere',
  supports: (endpoint) => endpoint === 'chat',
  writeRequest(channel, input) {
    const json =
      input.payload.kind === 'json'
        ? chatToCohere(input.payload.body, input.upstreamModel, input.isStream)
        : {};
    if (channel.paramOverride) Object.assign(json, channel.paramOverride);
    return { path: '/v2/chat', model: input.upstreamModel, headers: {}, body: { kind: 'json', json } };
  },
  // Cohere's errors are `{ "message": ... }` (v2: also `id`), which the OpenAI reader knows.
  readError: (status, body) => openAiFormat.readError(status, body),
  retriesBadRequest: false,
  usageOf: (answer) => cohereUsageOf(answer.usage),
  answerToChat: cohereToChat,
  streamToChat: createCohereDecoder,
};

/**
 * Bedrock's Converse API (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html and
 * ConverseStream), the one shape Bedrock gives every model that is not Claude (Llama, Nova, Mistral, DeepSeek...):
 * a wire format no client speaks, so always reached through the canonical chat shape. Request: `messages` of
 * content blocks (`text`, `image`, `toolUse`, `toolResult`), `system`, `inferenceConfig`, `toolConfig`. Answer:
 * `output.message`, `stopReason`, `usage` (`inputTokens`, `outputTokens`, `cacheReadInputTokens`). Stream events
 * (re-framed as SSE by event-stream.ts, named by their event type): `messageStart`, `contentBlockStart`,
 * `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata` (the usage, last).
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
  parseArguments,
  parseDataUrl,
} from '../../formats/canonical.ts';
import type { DecodedEvent, Format, StreamDecoder } from '../../formats/format.ts';
import { EMPTY_USAGE, toOpenAiUsageCounts } from '../../metering/usage.ts';
import { eventRecord, type SseEvent } from '../../sse.ts';
import { readBedrockError } from './errors.ts';

const FINISH_OF_STOP: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
};

/** Content blocks of a chat message's content (text and data-URL images). */
function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const blocks: Json[] = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') blocks.push({ text: part.text });
    else if (part.type === 'image_url') {
      const url = isRecord(part.image_url) ? asString(part.image_url.url) : asString(part.image_url);
      const data = url ? parseDataUrl(url) : undefined;
      if (data)
        blocks.push({
          image: { format: data.mediaType.replace('image/', ''), source: { bytes: data.data } },
        });
    }
  }
  return blocks;
}

/** A canonical chat request as a Converse request (the model is in the path). */
export function chatToConverse(chat: Readonly<Json>): Json {
  const system: Json[] = [];
  const messages: Json[] = [];
  const push = (role: 'user' | 'assistant', blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    // Converse wants turns to alternate: consecutive messages of one role are joined.
    if (last && last.role === role) (last.content as Json[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of Array.isArray(chat.messages) ? chat.messages : []) {
    if (!isRecord(message)) continue;
    if (message.role === 'system' || message.role === 'developer') {
      const text = contentText(message.content);
      if (text) system.push({ text });
    } else if (message.role === 'assistant') {
      const blocks = blocksOf(message.content);
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        blocks.push({
          toolUse: {
            toolUseId: asString(call.id) ?? '',
            name: asString(call.function.name) ?? '',
            input: parseArguments(call.function.arguments),
          },
        });
      }
      push('assistant', blocks);
    } else if (message.role === 'tool') {
      push('user', [
        {
          toolResult: {
            toolUseId: asString(message.tool_call_id) ?? '',
            content: [{ text: contentText(message.content) }],
          },
        },
      ]);
    } else push('user', blocksOf(message.content));
  }
  const inference: Json = {};
  const maxTokens = asNumber(chat.max_completion_tokens) ?? asNumber(chat.max_tokens);
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (asNumber(chat.temperature) !== undefined) inference.temperature = chat.temperature;
  if (asNumber(chat.top_p) !== undefined) inference.topP = chat.top_p;
  if (typeof chat.stop === 'string') inference.stopSequences = [chat.stop];
  else if (Array.isArray(chat.stop)) inference.stopSequences = chat.stop;
  const body: Json = { messages };
  if (system.length > 0) body.system = system;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  const tools = (Array.isArray(chat.tools) ? chat.tools : []).filter(
    (tool): tool is Json => isRecord(tool) && isRecord(tool.function),
  );
  if (tools.length > 0 && chat.tool_choice !== 'none')
    body.toolConfig = {
      tools: tools.map((tool) => {
        const fn = tool.function as Json;
        return {
          toolSpec: {
            name: fn.name,
            ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
            inputSchema: {
              json: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
            },
          },
        };
      }),
      ...(chat.tool_choice === 'required' ? { toolChoice: { any: {} } } : {}),
    };
  return body;
}

/**
 * The 1-hour cache writes of a Converse usage: `cacheDetails` lists the writes by TTL, `5m` or `1h`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CacheDetail.html); without it every write
 * in `cacheWriteInputTokens` is a 5-minute one.
 */
function converseOneHourWrites(details: unknown): number {
  if (!Array.isArray(details)) return 0;
  let total = 0;
  for (const detail of details) {
    if (isRecord(detail) && detail.ttl === '1h') total += Math.max(asNumber(detail.inputTokens) ?? 0, 0);
  }
  return total;
}

/** Converse's usage, normalised. */
export function converseUsageOf(usage: unknown): NormalisedUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const input = asNumber(usage.inputTokens);
  const output = asNumber(usage.outputTokens);
  if (input === undefined && output === undefined) return undefined;
  const cached = asNumber(usage.cacheReadInputTokens) ?? 0;
  const written = asNumber(usage.cacheWriteInputTokens) ?? 0;
  return {
    ...EMPTY_USAGE,
    promptTokens: (input ?? 0) + cached + written,
    completionTokens: output ?? 0,
    cachedTokens: cached,
    cacheWriteTokens: written,
    cacheWrite1hTokens: Math.min(converseOneHourWrites(usage.cacheDetails), written),
    source: 'upstream',
  };
}

/** A Converse answer as a `chat.completion`. */
export function converseToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  const message = isRecord(answer.output) && isRecord(answer.output.message) ? answer.output.message : {};
  let text = '';
  let reasoning = '';
  const calls: Json[] = [];
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') text += block.text;
    else if (isRecord(block.reasoningContent) && isRecord(block.reasoningContent.reasoningText))
      reasoning += asString(block.reasoningContent.reasoningText.text) ?? '';
    else if (isRecord(block.toolUse))
      calls.push({
        id: asString(block.toolUse.toolUseId) ?? `call_${calls.length}`,
        type: 'function',
        function: {
          name: asString(block.toolUse.name) ?? '',
          arguments: JSON.stringify(block.toolUse.input ?? {}),
        },
      });
  }
  const usage = converseUsageOf(answer.usage);
  const chatMessage: Json = { role: 'assistant', content: text };
  if (reasoning) chatMessage.reasoning_content = reasoning;
  if (calls.length > 0) chatMessage.tool_calls = calls;
  return {
    answer: chatCompletion(
      `chatcmpl-bedrock-${nowSeconds()}`,
      model,
      chatMessage,
      FINISH_OF_STOP[asString(answer.stopReason) ?? ''] ?? 'stop',
      usage && toOpenAiUsageCounts(usage),
    ),
    usage,
  };
}

/** ConverseStream events (as SSE named by their type) into canonical chunks. */
export function createConverseDecoder(model: string): StreamDecoder {
  const id = `chatcmpl-bedrock-${nowSeconds()}`;
  const created = nowSeconds();
  let usage: NormalisedUsage | undefined;
  let finish: string | undefined;
  /** Tool call index of each content block that is a tool use. */
  const toolIndex = new Map<number, number>();
  const chunk = (delta: Json, reason: string | null = null) => chatChunk(id, model, created, delta, reason);
  return {
    usage: () => usage,
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return { chunks: [] };
      switch (event.event) {
        case 'messageStart':
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        case 'contentBlockStart': {
          const start =
            isRecord(payload.start) && isRecord(payload.start.toolUse) ? payload.start.toolUse : undefined;
          if (!start) return { chunks: [] };
          const index = toolIndex.size;
          toolIndex.set(asNumber(payload.contentBlockIndex) ?? index, index);
          return {
            chunks: [
              chunk({
                tool_calls: [
                  {
                    index,
                    id: asString(start.toolUseId) ?? `call_${index}`,
                    type: 'function',
                    function: { name: asString(start.name) ?? '', arguments: '' },
                  },
                ],
              }),
            ],
          };
        }
        case 'contentBlockDelta': {
          const delta = isRecord(payload.delta) ? payload.delta : {};
          if (typeof delta.text === 'string') return { chunks: [chunk({ content: delta.text })] };
          if (isRecord(delta.reasoningContent) && typeof delta.reasoningContent.text === 'string')
            return { chunks: [chunk({ reasoning_content: delta.reasoningContent.text })] };
          if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
            const index = toolIndex.get(asNumber(payload.contentBlockIndex) ?? -1) ?? 0;
            return {
              chunks: [chunk({ tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] })],
            };
          }
          return { chunks: [] };
        }
        case 'messageStop':
          finish = FINISH_OF_STOP[asString(payload.stopReason) ?? ''] ?? 'stop';
          return { chunks: [chunk({}, finish)], finished: true };
        case 'metadata':
          usage = converseUsageOf(payload.usage) ?? usage;
          return { chunks: [], finished: finish !== undefined };
        case 'error':
          return { chunks: [], error: readBedrockError(502, JSON.stringify(payload.error ?? payload), {}) };
        default:
          return { chunks: [] };
      }
    },
  };
}

/** Converse as a format: only the canonical chat endpoint, never passed through (no client speaks it). */
export const converseFormat: Format = {
  id: 'bedrock-converse',
  supports: (endpoint) => endpoint === 'chat',
  writeRequest(channel, input) {
    const json = input.payload.kind === 'json' ? chatToConverse(input.payload.body) : {};
    if (channel.paramOverride) Object.assign(json, channel.paramOverride);
    return { path: '', model: input.upstreamModel, headers: {}, body: { kind: 'json', json } };
  },
  readError: (status, body) => readBedrockError(status, body, {}),
  retriesBadRequest: false,
  usageOf: (answer) => converseUsageOf(answer.usage),
  answerToChat: converseToChat,
  streamToChat: createConverseDecoder,
};

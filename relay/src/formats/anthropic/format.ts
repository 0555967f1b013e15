/**
 * Anthropic's wire format, upstream side (https://docs.anthropic.com/en/api/messages): `/v1/messages` and
 * `/v1/messages/count_tokens`, `anthropic-version: 2023-06-01` (the client's own on a request passed through), and
 * the `anthropic-beta` flags the client asked for or `claude.model_headers_settings` names for the model. Where it
 * is sent and with which key is the provider's (Anthropic's API, Bedrock, Vertex: ../../providers/).
 * A Messages request from an Anthropic client goes up as it came (the model mapped; thinking blocks without a
 * signature, written by the relay on a converted path, left out); a canonical chat request is converted (chat.ts).
 */
import type { ChannelView } from '../../contract.ts';
import { isRecord, type Json } from '../canonical.ts';
import type { BuildRequestInput, Format, FormatRequest } from '../format.ts';
import { chatToMessages, lacksLoopThinking, messagesToChat } from './chat.ts';
import { readAnthropicError } from './errors.ts';
import { createAnthropicDecoder } from './stream.ts';
import { anthropicUsageOf } from './usage.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

function headersFor(input: BuildRequestInput, model: string) {
  const headers: Record<string, string> = {
    // A request passed through keeps its client's API version; a converted one is written for this one.
    'anthropic-version': input.clientHeaders?.['anthropic-version'] ?? ANTHROPIC_VERSION,
  };
  const flags = new Set<string>();
  const beta = input.clientHeaders?.['anthropic-beta'];
  if (typeof beta === 'string') for (const flag of beta.split(',')) if (flag.trim()) flags.add(flag.trim());
  const perModel = input.options.get('claude.model_headers_settings')[model];
  if (perModel) {
    for (const [name, values] of Object.entries(perModel)) {
      if (name.toLowerCase() === 'anthropic-beta') for (const value of values) flags.add(value);
      else headers[name.toLowerCase()] = values.join(',');
    }
  }
  if (flags.size > 0) headers['anthropic-beta'] = [...flags].join(',');
  return headers;
}

const isUnsignedThinking = (block: unknown): boolean =>
  isRecord(block) &&
  block.type === 'thinking' &&
  (typeof block.signature !== 'string' || block.signature === '');

/**
 * A Messages request without the thinking blocks that carry no signature: the relay wrote them on a converted path
 * (another provider's reasoning), and Anthropic refuses a block it cannot verify. Usually nothing is removed and
 * the body is returned as it came.
 */
export function withoutUnsignedThinking(body: Json): Json {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const affected = messages.some(
    (message) =>
      isRecord(message) &&
      message.role === 'assistant' &&
      Array.isArray(message.content) &&
      message.content.some(isUnsignedThinking),
  );
  if (!affected) return body;
  const kept: unknown[] = [];
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) {
      kept.push(message);
      continue;
    }
    const content = message.content.filter((block) => !isUnsignedThinking(block));
    if (content.length > 0) kept.push({ ...message, content });
  }
  // A tool loop whose calling turn is left without thinking would be refused while thinking is on: this turn
  // goes without it.
  if (body.thinking !== undefined && lacksLoopThinking(kept)) {
    const { thinking: _off, ...rest } = body;
    return { ...rest, messages: kept };
  }
  return { ...body, messages: kept };
}

export const anthropicFormat: Format = {
  id: 'anthropic',
  supports: (endpoint) => endpoint === 'messages' || endpoint === 'count-tokens' || endpoint === 'chat',
  retriesBadRequest: true,
  // A hosted web search becomes the web search server tool (chat.ts).
  hostedTools: new Set(['web_search']),
  writeRequest(channel: ChannelView, input: BuildRequestInput): FormatRequest {
    const { payload } = input;
    if (payload.kind !== 'json') throw new Error('Anthropic takes JSON requests only');
    const body =
      input.endpoint === 'chat'
        ? chatToMessages(payload.body, input.upstreamModel, input.options)
        : withoutUnsignedThinking({ ...payload.body, model: input.upstreamModel });
    if (channel.paramOverride && !input.passThrough) Object.assign(body, channel.paramOverride);
    const model = typeof body.model === 'string' ? body.model : input.upstreamModel;
    const path = input.endpoint === 'count-tokens' ? '/v1/messages/count_tokens' : '/v1/messages';
    return { path, model, headers: headersFor(input, model), body: { kind: 'json', json: body } };
  },
  readError: readAnthropicError,
  usageOf: anthropicUsageOf,
  answerToChat: (answer, model) => messagesToChat(answer, model),
  streamToChat: createAnthropicDecoder,
};

/**
 * Anthropic Messages endpoints (https://docs.anthropic.com/en/api/messages): `POST /v1/messages` and
 * `POST /v1/messages/count_tokens`, read as Anthropic documents them; errors in Anthropic's shape (the ingress).
 * Messages go to Anthropic channels as sent and to any other channel through the canonical chat shape; counting
 * tokens is free: Anthropic channels are asked, any other is answered from the relay's own count.
 */

import type { EndpointSpec, PreparedRequest, RelayError, RelayRequest } from '../../contract.ts';
import { invalidRequest } from '../../errors.ts';
import { countTextTokens, encodingForModel } from '../../metering/tokens.ts';
import { EMPTY_USAGE } from '../../metering/usage.ts';
import { isRecord, type Json } from '../canonical.ts';
import { readJsonBody } from '../openai/text-endpoints.ts';
import { anthropicMessagesIngress } from './ingress.ts';
import { anthropicUsageOf } from './usage.ts';

/** Texts of a Messages request: the system prompt, text blocks, tool results and tool inputs. */
function messageTexts(body: Json): string[] {
  const texts: string[] = [];
  const add = (content: unknown) => {
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content))
      for (const block of content) {
        if (!isRecord(block)) continue;
        if (typeof block.text === 'string') texts.push(block.text);
        else if (block.type === 'tool_result') add(block.content);
        else if (block.type === 'tool_use') texts.push(JSON.stringify(block.input ?? {}));
      }
  };
  add(body.system);
  for (const message of Array.isArray(body.messages) ? body.messages : [])
    if (isRecord(message)) add(message.content);
  return texts;
}

/**
 * The client's `anthropic-beta` flags and `anthropic-version`, for an Anthropic upstream: a body passed through
 * is shaped by the API version its client speaks (the SDK 1.x sends 2026-10-21), so the version goes with it.
 */
function betaHeaders(request: RelayRequest): Readonly<Record<string, string>> | undefined {
  const headers: Record<string, string> = {};
  for (const name of ['anthropic-beta', 'anthropic-version']) {
    const header = request.headers[name];
    const value = Array.isArray(header) ? header.join(',') : header;
    if (value) headers[name] = value;
  }
  return Object.keys(headers).length > 0 ? headers : undefined;
}

function readMessages(
  request: RelayRequest,
  requireMaxTokens: boolean,
): { body: Json; model: string } | RelayError {
  const read = readJsonBody(request.body);
  if ('status' in read) return read;
  const { body, model } = read;
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return invalidRequest('messages: a non-empty list is required', 'messages');
  // `system` messages in the conversation: Claude Code sends them (beta `mid-conversation-tool-changes`).
  if (
    body.messages.some(
      (message) =>
        !isRecord(message) ||
        (message.role !== 'user' && message.role !== 'assistant' && message.role !== 'system'),
    )
  )
    return invalidRequest('messages: each message needs the role user, assistant or system', 'messages');
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return invalidRequest('system: text or a list of text blocks is required', 'system');
  const maxTokens = body.max_tokens;
  if (requireMaxTokens && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1))
    return invalidRequest('max_tokens: a whole number of 1 or more is required', 'max_tokens');
  return { body, model };
}

function prepareMessages(request: RelayRequest): PreparedRequest | RelayError {
  const read = readMessages(request, true);
  if ('status' in read) return read;
  const { body, model } = read;
  const texts = messageTexts(body);
  let counted: number | undefined;
  return {
    model,
    payload: { kind: 'json', body },
    isStream: body.stream === true,
    maxTokens: body.max_tokens as number,
    promptTexts: texts,
    clientHeaders: betaHeaders(request),
    get promptTokens() {
      const encoding = encodingForModel(model);
      counted ??=
        texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0) + 3 * texts.length + 3;
      return counted;
    },
  };
}

/** Text and thinking blocks of a Messages answer. */
function visitMessage(answer: Json, edit: (text: string) => string): void {
  for (const block of Array.isArray(answer.content) ? answer.content : []) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') block.text = edit(block.text);
    else if (typeof block.thinking === 'string') block.thinking = edit(block.thinking);
  }
}

export const messagesSpec: EndpointSpec = {
  endpoint: 'messages',
  ingress: anthropicMessagesIngress,
  canonical: 'chat',
  prepare: prepareMessages,
  answer: 'json',
  stream: 'native',
  usageOf: anthropicUsageOf,
  visitOutput: visitMessage,
  countedOutput(answer) {
    const parts: string[] = [];
    for (const block of Array.isArray(answer.content) ? answer.content : []) {
      if (!isRecord(block)) continue;
      if (typeof block.text === 'string') parts.push(block.text);
      else if (typeof block.thinking === 'string') parts.push(block.thinking);
      else if (block.type === 'tool_use')
        parts.push(`${block.name ?? ''}${JSON.stringify(block.input ?? {})}`);
    }
    return parts.join('');
  },
};

export const countTokensSpec: EndpointSpec = {
  endpoint: 'count-tokens',
  ingress: anthropicMessagesIngress,
  prepare(request) {
    const read = readMessages(request, false);
    if ('status' in read) return read;
    const { body, model } = read;
    // Free at Anthropic, so nothing is counted or reserved.
    return {
      model,
      payload: { kind: 'json', body },
      isStream: false,
      promptTokens: 0,
      promptTexts: [],
      clientHeaders: betaHeaders(request),
    };
  },
  answer: 'json',
  usageOf: () => EMPTY_USAGE,
  countLocally: (prepared) => ({ input_tokens: countTexts(prepared.model, messageTexts(bodyOf(prepared))) }),
};

const bodyOf = (prepared: PreparedRequest): Json =>
  prepared.payload.kind === 'json' ? { ...prepared.payload.body } : {};

/** Tokens of the texts with a few of framing each, as a chat message is counted. */
function countTexts(model: string, texts: readonly string[]): number {
  const encoding = encodingForModel(model);
  return texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0) + 3 * texts.length + 3;
}

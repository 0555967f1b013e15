/**
 * JSON text endpoints (OpenAI API reference: /chat, /completions, /embeddings, /moderations, /responses; and
 * Jina/Cohere `/rerank`): what each needs in the body, how its prompt is counted, where its usage and output are.
 */

import { isRecord, type Json } from '@turnpike/core/json';
import type {
  EndpointSpec,
  NormalisedUsage,
  PreparedRequest,
  RelayError,
  RelayRequest,
} from '../../contract.ts';
import { invalidRequest } from '../../errors.ts';
import {
  countChatPromptTokens,
  countInputTokens,
  countTextTokens,
  encodingForModel,
} from '../../metering/tokens.ts';
import { EMPTY_USAGE } from '../../metering/usage.ts';
import { openAiCompactIngress } from './compact-ingress.ts';
import { openAiResponsesIngress } from './responses-ingress.ts';
import { openAiAnswerUsage } from './usage.ts';

const MAX_TOKENS_LIMIT = 2 ** 30;

/** Model from the body (or the default), and the common `max_*tokens` checks. */
export function readJsonBody(
  body: unknown,
  defaultModel?: string,
): { body: Json; model: string; maxTokens: number | undefined } | RelayError {
  if (!isRecord(body)) return invalidRequest('the request body must be a JSON object');
  const model = body.model ?? defaultModel;
  if (typeof model !== 'string' || model.trim() === '') return invalidRequest('model is required');
  const flagged = checkActedOnFields(body);
  if (flagged) return flagged;
  let maxTokens: number | undefined;
  for (const field of ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOKENS_LIMIT)
      return invalidRequest(`${field} must be a whole number between 0 and ${MAX_TOKENS_LIMIT}`);
    if (value > 0) maxTokens = Math.max(maxTokens ?? 0, value);
  }
  return { body, model, maxTokens };
}

/**
 * The fields the gateway itself acts on, when present, must have their documented types: `stream` (the answer's
 * whole shape) a boolean, `stream_options` an object with a boolean `include_usage` (what the bill reads). A
 * wrong type is the caller's 400, not an upstream's 502.
 */
export function checkActedOnFields(body: Json): RelayError | undefined {
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    return invalidRequest('stream must be true or false', 'stream');
  const options = body.stream_options;
  if (options !== undefined && options !== null) {
    if (!isRecord(options)) return invalidRequest('stream_options must be an object', 'stream_options');
    const include = options.include_usage;
    if (include !== undefined && include !== null && typeof include !== 'boolean')
      return invalidRequest(
        'stream_options.include_usage must be true or false',
        'stream_options.include_usage',
      );
  }
  return undefined;
}

/** Strings of a `prompt` / `input` that is a string or a list (token-id lists are skipped). */
export function inputTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [];
  return input.filter((item): item is string => typeof item === 'string');
}

/** Text parts of chat message content (a string, or parts with `text`); images are not checked. */
function contentTexts(content: unknown, out: string[]): void {
  if (typeof content === 'string') out.push(content);
  else if (Array.isArray(content))
    for (const part of content) if (isRecord(part) && typeof part.text === 'string') out.push(part.text);
}

const json = (body: Json) => ({ kind: 'json' as const, body });

/** The prepared request with its input tokens counted on first read: most answers report usage themselves. */
function withLazyPromptTokens(
  count: () => number,
  fields: Omit<PreparedRequest, 'promptTokens'>,
): PreparedRequest {
  let counted: number | undefined;
  return {
    ...fields,
    get promptTokens() {
      counted ??= count();
      return counted;
    },
  };
}

function prepareChat(request: RelayRequest): PreparedRequest | RelayError {
  const read = readJsonBody(request.body);
  if ('status' in read) return read;
  const { body, model, maxTokens } = read;
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return invalidRequest('messages is required and must be a non-empty list');
  const texts: string[] = [];
  for (const message of body.messages) if (isRecord(message)) contentTexts(message.content, texts);
  return withLazyPromptTokens(
    () =>
      countChatPromptTokens(
        model,
        body.messages as never[],
        Array.isArray(body.tools) ? (body.tools as unknown[]) : [],
      ),
    {
      model,
      payload: json(body),
      isStream: body.stream === true,
      maxTokens,
      promptTexts: texts,
    },
  );
}

/** Chat answer: message content and reasoning are output; tool calls are counted too. */
export function visitChat(answer: Json, edit: (text: string) => string): void {
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  for (const choice of choices) {
    const message = isRecord(choice) ? choice.message : undefined;
    if (!isRecord(message)) continue;
    if (typeof message.content === 'string') message.content = edit(message.content);
    if (typeof message.reasoning_content === 'string')
      message.reasoning_content = edit(message.reasoning_content);
  }
}

export function countedChat(answer: Json): string {
  const parts: string[] = [];
  visitChat(answer, (text) => {
    parts.push(text);
    return text;
  });
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  for (const choice of choices) {
    const message = isRecord(choice) ? choice.message : undefined;
    if (!isRecord(message) || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      const fn = isRecord(call) ? call.function : undefined;
      if (isRecord(fn)) parts.push(`${fn.name ?? ''}${fn.arguments ?? ''}`);
    }
  }
  return parts.join('');
}

/** An answer's usage, with the service tier, web searches and images it reports (usage.ts). */
const openAiUsage = (answer: Json): NormalisedUsage | undefined => openAiAnswerUsage(answer);

export const chatSpec: EndpointSpec = {
  endpoint: 'chat',
  canonical: 'chat',
  prepare: prepareChat,
  answer: 'json',
  stream: 'chat',
  usageOf: openAiUsage,
  visitOutput: visitChat,
  countedOutput: countedChat,
};

export const completionsSpec: EndpointSpec = {
  endpoint: 'completions',
  prepare(request) {
    const read = readJsonBody(request.body);
    if ('status' in read) return read;
    const { body, model, maxTokens } = read;
    const { prompt } = body;
    if (prompt === undefined || prompt === null || (Array.isArray(prompt) && prompt.length === 0))
      return invalidRequest('prompt is required');
    return withLazyPromptTokens(() => countInputTokens(model, prompt), {
      model,
      payload: json(body),
      isStream: body.stream === true,
      maxTokens,
      promptTexts: inputTexts(prompt),
    });
  },
  answer: 'json',
  stream: 'chat',
  usageOf: openAiUsage,
  visitOutput(answer, edit) {
    const choices = Array.isArray(answer.choices) ? answer.choices : [];
    for (const choice of choices)
      if (isRecord(choice) && typeof choice.text === 'string') choice.text = edit(choice.text);
  },
};

/** Embeddings, also as `/v1/engines/:model/embeddings` (the path names the model). */
export const embeddingsSpec: EndpointSpec = {
  endpoint: 'embeddings',
  canonical: 'embeddings',
  prepare(request) {
    const fromPath = (request.params as { model?: unknown } | undefined)?.model;
    const raw =
      typeof fromPath === 'string' && isRecord(request.body)
        ? { ...request.body, model: fromPath }
        : request.body;
    const read = readJsonBody(raw);
    if ('status' in read) return read;
    const { body, model } = read;
    if (body.input === undefined || body.input === null) return invalidRequest('input is required');
    return withLazyPromptTokens(() => countInputTokens(model, body.input), {
      model,
      payload: json(body),
      isStream: false,
      promptTexts: inputTexts(body.input),
    });
  },
  answer: 'json',
  usageOf: openAiUsage,
};

export const DEFAULT_MODERATION_MODEL = 'text-moderation-latest';

export const moderationsSpec: EndpointSpec = {
  endpoint: 'moderations',
  prepare(request) {
    const read = readJsonBody(request.body, DEFAULT_MODERATION_MODEL);
    if ('status' in read) return read;
    const { body, model } = read;
    if (body.input === undefined || body.input === null || body.input === '')
      return invalidRequest('input is required');
    const texts = inputTexts(body.input);
    // Multi-modal input: `[{type:"text", text}, {type:"image_url", ...}]`.
    if (Array.isArray(body.input)) contentTexts(body.input, texts);
    return withLazyPromptTokens(
      () => texts.reduce((sum, text) => sum + countTextTokens(text, encodingForModel(model)), 0),
      {
        model,
        payload: json({ ...body, model }),
        isStream: false,
        promptTexts: texts,
      },
    );
  },
  answer: 'json',
  // Moderation answers carry no usage: the input is counted.
  usageOf: () => undefined,
};

/** A rerank document is a string or `{ text }` (Cohere and Jina both accept either). */
const documentText = (doc: unknown): string =>
  typeof doc === 'string' ? doc : isRecord(doc) && typeof doc.text === 'string' ? doc.text : '';

/**
 * Rerank usage: Jina `usage.{prompt_tokens,total_tokens}`, Cohere `meta.billed_units.input_tokens` (its
 * `search_units` are not tokens and are not used), Xinference `meta.tokens.input_tokens`; none → counted.
 */
export function rerankUsage(answer: Json): NormalisedUsage | undefined {
  if (isRecord(answer.usage)) {
    const { prompt_tokens: prompt, total_tokens: total } = answer.usage;
    const tokens = typeof prompt === 'number' && prompt > 0 ? prompt : total;
    if (typeof tokens === 'number' && tokens > 0) return { ...EMPTY_USAGE, promptTokens: Math.floor(tokens) };
  }
  const meta = isRecord(answer.meta) ? answer.meta : undefined;
  const billed = isRecord(meta?.billed_units)
    ? meta.billed_units
    : isRecord(meta?.tokens)
      ? meta.tokens
      : undefined;
  const input = billed?.input_tokens;
  if (typeof input === 'number' && input > 0) {
    const output = typeof billed?.output_tokens === 'number' ? Math.floor(billed.output_tokens) : 0;
    return { ...EMPTY_USAGE, promptTokens: Math.floor(input), completionTokens: Math.max(output, 0) };
  }
  return undefined;
}

export const rerankSpec: EndpointSpec = {
  endpoint: 'rerank',
  prepare(request) {
    const read = readJsonBody(request.body);
    if ('status' in read) return read;
    const { body, model } = read;
    if (typeof body.query !== 'string' || body.query === '') return invalidRequest('query is required');
    if (!Array.isArray(body.documents) || body.documents.length === 0)
      return invalidRequest('documents is required and must be a non-empty list');
    const texts = [body.query, ...body.documents.map(documentText)];
    const encoding = encodingForModel(model);
    return withLazyPromptTokens(() => texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0), {
      model,
      payload: json(body),
      isStream: false,
      promptTexts: texts,
    });
  },
  answer: 'json',
  usageOf: rerankUsage,
};

/** Texts of a Responses API `input`: a string, or items (messages with string or part content). */
function responsesTexts(body: Json): string[] {
  const texts: string[] = [];
  if (typeof body.instructions === 'string') texts.push(body.instructions);
  const { input } = body;
  if (typeof input === 'string') texts.push(input);
  else if (Array.isArray(input)) {
    for (const item of input) {
      if (typeof item === 'string') texts.push(item);
      else if (isRecord(item)) {
        contentTexts(item.content, texts);
        if (typeof item.output === 'string') texts.push(item.output);
        if (typeof item.arguments === 'string') texts.push(item.arguments);
      }
    }
  }
  return texts;
}

export const responsesSpec: EndpointSpec = {
  endpoint: 'responses',
  ingress: openAiResponsesIngress,
  canonical: 'chat',
  prepare(request) {
    const read = readJsonBody(request.body);
    if ('status' in read) return read;
    const { body, model, maxTokens } = read;
    if (body.input === undefined || body.input === null || body.input === '')
      return invalidRequest('input is required');
    const texts = responsesTexts(body);
    const encoding = encodingForModel(model);
    // Like a chat message: a few tokens of framing per item, as OpenAI counts them.
    const items = Array.isArray(body.input) ? body.input.length : 1;
    return withLazyPromptTokens(
      () => texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0) + 3 * items + 3,
      {
        model,
        payload: json(body),
        isStream: body.stream === true,
        maxTokens,
        promptTexts: texts,
      },
    );
  },
  answer: 'json',
  stream: 'responses',
  // `input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens` (normaliseOpenAiUsage reads both shapes).
  usageOf: openAiUsage,
  visitOutput(answer, edit) {
    const output = Array.isArray(answer.output) ? answer.output : [];
    for (const item of output) {
      if (!isRecord(item) || !Array.isArray(item.content)) continue;
      for (const part of item.content)
        if (isRecord(part) && typeof part.text === 'string') part.text = edit(part.text);
    }
  },
};

/**
 * `/v1/responses/compact` (compact-ingress.ts): the history in, the compacted history out; never streamed. An
 * OpenAI channel answers it itself, any other through a summarising chat call; billed by the usage either way.
 */
export const responsesCompactSpec: EndpointSpec = {
  endpoint: 'responses-compact',
  ingress: openAiCompactIngress,
  canonical: 'chat',
  prepare(request) {
    const read = readJsonBody(request.body);
    if ('status' in read) return read;
    const { body, model } = read;
    if (body.input === undefined || body.input === null || body.input === '')
      return invalidRequest('input is required');
    if (body.stream === true) return invalidRequest('stream is not supported for compaction');
    const texts = responsesTexts(body);
    const encoding = encodingForModel(model);
    const items = Array.isArray(body.input) ? body.input.length : 1;
    return withLazyPromptTokens(
      () => texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0) + 3 * items + 3,
      { model, payload: json(body), isStream: false, promptTexts: texts },
    );
  },
  answer: 'json',
  usageOf: openAiUsage,
};

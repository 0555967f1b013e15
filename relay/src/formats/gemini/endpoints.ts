/**
 * Gemini endpoints (https://ai.google.dev/api): `POST /v1beta/models/<model>:generateContent`,
 * `:streamGenerateContent`, `:countTokens`, `:embedContent` and `:batchEmbedContents`. The model and the action
 * are in the path; errors in Gemini's shape (the ingress). Content generation goes to Gemini channels as sent and
 * to any other channel through the canonical chat shape; counting is free (a channel of another format is answered
 * from the relay's own count); embeddings go to Gemini channels as sent and to OpenAI-compatible ones as OpenAI's
 * `/v1/embeddings` request, answered back in Gemini's shape.
 */

import type { EndpointSpec, PreparedRequest, RelayError, RelayRequest } from '../../contract.ts';
import { invalidRequest } from '../../errors.ts';
import { countTextTokens, encodingForModel } from '../../metering/tokens.ts';
import { EMPTY_USAGE } from '../../metering/usage.ts';
import { isRecord, type Json } from '../canonical.ts';
import { geminiEmbedIngress, geminiIngress } from './ingress.ts';
import { geminiUsageOf } from './usage.ts';

/** `gemini-2.0-flash:generateContent` (the path after `/models/`) → model and action. */
export function readModelAction(path: string): { model: string; action: string } | undefined {
  const at = path.lastIndexOf(':');
  if (at <= 0) return undefined;
  const model = decodeURIComponent(path.slice(0, at)).replace(/^models\//, '');
  return model === '' ? undefined : { model, action: path.slice(at + 1) };
}

function modelOf(request: RelayRequest): string | RelayError {
  const path = (request.params as { '*'?: unknown } | undefined)?.['*'];
  const read = typeof path === 'string' ? readModelAction(path) : undefined;
  return read
    ? read.model
    : invalidRequest('the path must name a model and an action: /v1beta/models/<model>:<action>');
}

/** Texts of `contents` and `systemInstruction` (and of embedding requests' `content`). */
function geminiTexts(body: Json): string[] {
  const texts: string[] = [];
  const add = (content: unknown) => {
    if (!isRecord(content) || !Array.isArray(content.parts)) return;
    for (const part of content.parts)
      if (isRecord(part) && typeof part.text === 'string') texts.push(part.text);
  };
  add(body.systemInstruction);
  for (const content of Array.isArray(body.contents) ? body.contents : []) add(content);
  add(body.content);
  for (const request of Array.isArray(body.requests) ? body.requests : [])
    if (isRecord(request)) add(request.content);
  return texts;
}

function readGemini(request: RelayRequest): { body: Json; model: string } | RelayError {
  const model = modelOf(request);
  if (typeof model !== 'string') return model;
  if (!isRecord(request.body)) return invalidRequest('the request body must be a JSON object');
  return { body: request.body, model };
}

function prepareGenerate(request: RelayRequest, isStream: boolean): PreparedRequest | RelayError {
  const read = readGemini(request);
  if ('status' in read) return read;
  const { body, model } = read;
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return invalidRequest('contents: a non-empty list is required', 'contents');
  const config = body.generationConfig;
  if (config !== undefined && !isRecord(config))
    return invalidRequest('generationConfig must be an object', 'generationConfig');
  const limit = isRecord(config) ? config.maxOutputTokens : undefined;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0))
    return invalidRequest(
      'generationConfig.maxOutputTokens must be a whole number',
      'generationConfig.maxOutputTokens',
    );
  const texts = geminiTexts(body);
  let counted: number | undefined;
  return {
    model,
    payload: { kind: 'json', body },
    isStream,
    maxTokens: typeof limit === 'number' && limit > 0 ? limit : undefined,
    promptTexts: texts,
    get promptTokens() {
      const encoding = encodingForModel(model);
      counted ??= texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0) + 3 * texts.length;
      return counted;
    },
  };
}

/** Text parts of every candidate (thoughts included). */
function visitCandidates(answer: Json, edit: (text: string) => string): void {
  for (const candidate of Array.isArray(answer.candidates) ? answer.candidates : []) {
    const content = isRecord(candidate) ? candidate.content : undefined;
    for (const part of isRecord(content) && Array.isArray(content.parts) ? content.parts : [])
      if (isRecord(part) && typeof part.text === 'string') part.text = edit(part.text);
  }
}

const generateSpec = (isStream: boolean): EndpointSpec => ({
  endpoint: 'generate-content',
  ingress: geminiIngress,
  canonical: 'chat',
  prepare: (request) => prepareGenerate(request, isStream),
  answer: 'json',
  stream: 'native',
  usageOf: geminiUsageOf,
  visitOutput: visitCandidates,
});

export const generateContentSpec = generateSpec(false);
export const streamGenerateContentSpec = generateSpec(true);

export const countTokensGeminiSpec: EndpointSpec = {
  endpoint: 'count-tokens-gemini',
  ingress: geminiIngress,
  prepare(request) {
    const read = readGemini(request);
    if ('status' in read) return read;
    // Free at Google, so nothing is counted or reserved.
    return {
      model: read.model,
      payload: { kind: 'json', body: read.body },
      isStream: false,
      promptTokens: 0,
      promptTexts: [],
    };
  },
  answer: 'json',
  usageOf: () => EMPTY_USAGE,
  countLocally(prepared) {
    const encoding = encodingForModel(prepared.model);
    const body = prepared.payload.kind === 'json' ? { ...prepared.payload.body } : {};
    return { totalTokens: geminiTexts(body).reduce((sum, text) => sum + countTextTokens(text, encoding), 0) };
  },
};

/**
 * `embedContent` and `batchEmbedContents`: to Gemini channels as sent, to OpenAI-compatible channels as OpenAI's
 * embeddings request (the answer back in Gemini's shape, billed by the upstream's `prompt_tokens`).
 */
const embedSpec = (embedBatch: boolean): EndpointSpec => ({
  endpoint: 'embed-content',
  ingress: geminiEmbedIngress(embedBatch),
  canonical: 'embeddings',
  prepare(request) {
    const read = readGemini(request);
    if ('status' in read) return read;
    if (embedBatch && (!Array.isArray(read.body.requests) || read.body.requests.length === 0))
      return invalidRequest('requests: a non-empty list is required', 'requests');
    const texts = geminiTexts(read.body);
    if (texts.length === 0) return invalidRequest('content: text to embed is required', 'content');
    const encoding = encodingForModel(read.model);
    const tokens = texts.reduce((sum, text) => sum + countTextTokens(text, encoding), 0);
    return {
      model: read.model,
      payload: { kind: 'json', body: read.body },
      isStream: false,
      promptTokens: tokens,
      promptTexts: texts,
    };
  },
  answer: 'json',
  // Gemini's embedding answers carry no usage: the input is counted (an OpenAI upstream's usage is read).
  usageOf: () => undefined,
});

export const embedContentSpec = embedSpec(false);
export const batchEmbedContentsSpec = embedSpec(true);

/** The spec of a Gemini action, or undefined for an action the relay does not serve. */
export function geminiSpecOf(action: string): EndpointSpec | undefined {
  switch (action) {
    case 'generateContent':
      return generateContentSpec;
    case 'streamGenerateContent':
      return streamGenerateContentSpec;
    case 'countTokens':
      return countTokensGeminiSpec;
    case 'embedContent':
      return embedContentSpec;
    case 'batchEmbedContents':
      return batchEmbedContentsSpec;
    default:
      return undefined;
  }
}

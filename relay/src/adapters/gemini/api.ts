/**
 * Gemini upstreams (https://ai.google.dev/api): `POST <base>/<version>/models/<model>:generateContent`,
 * `:streamGenerateContent?alt=sse`, `:countTokens`, `:embedContent` and `:batchEmbedContents`, the key in
 * `x-goog-api-key`; an OpenAI embeddings request becomes `batchEmbedContents`; the version per model from `gemini.version_settings` (default `v1beta`). A request from a
 * Gemini client goes up as it came (the model is in the path); a canonical chat request is converted (chat.ts).
 */
import { findProviderType } from '@turnpike/core/providers/catalogue';
import { isRecord } from '../canonical.ts';
import type { Adapter, AdapterChannel, BuildRequestInput, UpstreamCall } from '../registry.ts';
import { chatToGemini, embeddingsToGemini, geminiToChat, geminiToEmbeddings } from './chat.ts';
import { readGeminiError } from './errors.ts';
import { createGeminiDecoder } from './stream.ts';
import { geminiUsageOf } from './usage.ts';

function geminiBase(channel: AdapterChannel): string {
  const base =
    channel.baseUrl ||
    findProviderType(channel.type)?.defaultBaseUrl ||
    'https://generativelanguage.googleapis.com';
  return base.replace(/\/+$/, '');
}

/** The action of a native request: the client's (kept by the ingress) or the stream flag's. */
function actionOf(input: BuildRequestInput): string {
  if (input.endpoint === 'count-tokens-gemini') return 'countTokens';
  if (input.endpoint === 'embeddings') return 'batchEmbedContents';
  if (input.endpoint === 'embed-content')
    return input.payload.kind === 'json' && Array.isArray(input.payload.body.requests)
      ? 'batchEmbedContents'
      : 'embedContent';
  return input.isStream ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

export const geminiAdapter: Adapter = {
  id: 'gemini',
  supports: (endpoint) =>
    endpoint === 'chat' ||
    endpoint === 'embeddings' ||
    endpoint === 'generate-content' ||
    endpoint === 'count-tokens-gemini' ||
    endpoint === 'embed-content',
  retriesBadRequest: false,
  buildRequest(channel: AdapterChannel, input: BuildRequestInput): UpstreamCall {
    const { payload } = input;
    if (payload.kind !== 'json') throw new Error('Gemini takes JSON requests only');
    let model = input.upstreamModel;
    let body: Record<string, unknown>;
    if (input.endpoint === 'chat') {
      const converted = chatToGemini(payload.body, model, input.options);
      model = converted.model;
      body = converted.body;
    } else if (input.endpoint === 'embeddings') {
      body = embeddingsToGemini(payload.body, model);
    } else {
      body = { ...payload.body };
      if (Array.isArray(body.requests))
        body.requests = body.requests.map((request) =>
          isRecord(request) ? { ...request, model: `models/${model}` } : request,
        );
    }
    if (channel.paramOverride && !input.passThrough) Object.assign(body, channel.paramOverride);
    const versions = input.options.get('gemini.version_settings');
    const version = versions[model] ?? versions.default ?? 'v1beta';
    return {
      url: `${geminiBase(channel)}/${version}/models/${encodeURIComponent(model)}:${actionOf(input)}`,
      headers: {
        ...channel.headers,
        'x-goog-api-key': channel.key ?? '',
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    };
  },
  readError: readGeminiError,
  usageOf: geminiUsageOf,
  answerToChat: (answer, model) => geminiToChat(answer, model),
  streamToChat: createGeminiDecoder,
  answerToEmbeddings: geminiToEmbeddings,
};

/**
 * Gemini's wire format, upstream side (https://ai.google.dev/api): `models/<model>:generateContent`,
 * `:streamGenerateContent?alt=sse`, `:countTokens`, `:embedContent` and `:batchEmbedContents`; an OpenAI
 * embeddings request becomes `batchEmbedContents`. A request from a Gemini client goes up as it came (the model is
 * in the path); a canonical chat request is converted (chat.ts). The provider puts the API version (Gemini API) or
 * the project and region (Vertex AI) before the path, and adds the credential (../../providers/).
 */
import type { ChannelView } from '../../contract.ts';
import { isRecord } from '../canonical.ts';
import type { BuildRequestInput, Format, FormatRequest } from '../format.ts';
import { chatToGemini, embeddingsToGemini, geminiToChat, geminiToEmbeddings } from './chat.ts';
import { readGeminiError } from './errors.ts';
import { createGeminiDecoder } from './stream.ts';
import { geminiServiceTierOf, geminiUsageOf } from './usage.ts';

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

export const geminiFormat: Format = {
  id: 'gemini',
  supports: (endpoint) =>
    endpoint === 'chat' ||
    endpoint === 'embeddings' ||
    endpoint === 'generate-content' ||
    endpoint === 'count-tokens-gemini' ||
    endpoint === 'embed-content',
  retriesBadRequest: false,
  // A hosted web search becomes Google Search grounding (chat.ts).
  hostedTools: new Set(['web_search']),
  writeRequest(channel: ChannelView, input: BuildRequestInput): FormatRequest {
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
    return {
      path: `models/${encodeURIComponent(model)}:${actionOf(input)}`,
      model,
      headers: {},
      body: { kind: 'json', json: body },
    };
  },
  readError: readGeminiError,
  usageOf: (answer) => geminiUsageOf(answer),
  serviceTierOf: geminiServiceTierOf,
  answerToChat: (answer, model) => geminiToChat(answer, model),
  streamToChat: createGeminiDecoder,
  answerToEmbeddings: geminiToEmbeddings,
};

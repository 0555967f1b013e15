/**
 * OpenAI's wire format, upstream side: https://platform.openai.com/docs/api-reference (chat, completions,
 * embeddings, moderations, responses, images, audio) and the Jina/Cohere-style `/v1/rerank` that OpenAI-compatible
 * hosts (Jina, SiliconFlow, Xinference, ...) serve. Paths `/v1/<endpoint>`; the provider puts the base URL (or
 * Azure's deployment) before them and adds the credential (../../providers/openai, ../../providers/azure).
 *
 * Bodies: JSON requests go up as the client sent them with the mapped model, the channel's `param_override`
 * merged on top (shallow) and, for streams of chat and completions, `stream_options.include_usage` forced on
 * (billing needs the usage chunk; the pipeline hides it from a client that did not ask). Multipart requests
 * (image edits, transcriptions) are streamed from the spool with the `model` field rewritten when mapped.
 *
 * Chat requests for reasoning models get the reference's conveniences (reasoning.ts: `-high`/`-medium`/`-low`
 * suffixes, `max_completion_tokens`), and chat answers the channel's `force_format` and `thinking_to_content`
 * rewrites (answer-rewrite.ts).
 */

import { isRecord } from '@turnpike/core/json';
import type { ChannelView, Endpoint } from '../../contract.ts';
import { parseUpstreamError } from '../../errors.ts';
import { normaliseOpenAiUsage } from '../../metering/usage.ts';
import { THINKING_CONTENT_PREFIX } from '../canonical.ts';
import type { BuildRequestInput, Format, FormatRequest } from '../format.ts';
import { chatAnswerRewriteOf } from './answer-rewrite.ts';
import { withSummariesForOpenAi } from './compaction.ts';
import { applyReasoningConventions } from './reasoning.ts';
import { createOpenAiChatDecoder } from './stream.ts';
import { openAiAnswerUsage } from './usage.ts';

type OpenAiEndpoint = Exclude<
  Endpoint,
  'messages' | 'count-tokens' | 'generate-content' | 'count-tokens-gemini' | 'embed-content'
>;

const PATHS: Record<OpenAiEndpoint, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
  moderations: '/v1/moderations',
  rerank: '/v1/rerank',
  responses: '/v1/responses',
  'responses-compact': '/v1/responses/compact',
  'image-generation': '/v1/images/generations',
  'image-edit': '/v1/images/edits',
  speech: '/v1/audio/speech',
  transcription: '/v1/audio/transcriptions',
  translation: '/v1/audio/translations',
};

/** Endpoints whose streams carry a usage chunk only when `stream_options.include_usage` is set. */
const USAGE_CHUNK_ENDPOINTS: ReadonlySet<Endpoint> = new Set(['chat', 'completions']);

const isOpenAiEndpoint = (endpoint: Endpoint): endpoint is OpenAiEndpoint => endpoint in PATHS;

const isRelayReasoning = (item: unknown): boolean =>
  isRecord(item) &&
  item.type === 'reasoning' &&
  typeof item.encrypted_content === 'string' &&
  item.encrypted_content.startsWith(THINKING_CONTENT_PREFIX);

export const openAiFormat: Format = {
  id: 'openai',
  isCanonical: true,
  supports: isOpenAiEndpoint,
  retriesBadRequest: false,
  writeRequest(channel: ChannelView, input: BuildRequestInput): FormatRequest {
    if (!isOpenAiEndpoint(input.endpoint)) throw new Error(`no OpenAI path for ${input.endpoint}`);
    const path = PATHS[input.endpoint];
    const model = input.upstreamModel;
    const { payload } = input;
    if (payload.kind === 'multipart') {
      const { stream, length } = payload.body.open(input.upstreamModel);
      const multipart = { kind: 'multipart' as const, stream, length, contentType: payload.body.contentType };
      return { path, model, body: multipart, headers: {} };
    }
    const body: Record<string, unknown> = { ...payload.body, model: input.upstreamModel };
    // Reasoning items holding another provider's signed thinking (written by the relay for a Responses client on
    // a Claude channel) mean nothing to OpenAI, which would refuse to decrypt them.
    if (input.endpoint === 'responses' && Array.isArray(body.input) && body.input.some(isRelayReasoning))
      body.input = body.input.filter((item) => !isRelayReasoning(item));
    // The relay's compactions (of a history once served elsewhere) go to OpenAI as the summaries they hold.
    if (input.endpoint === 'responses' || input.endpoint === 'responses-compact')
      body.input = withSummariesForOpenAi(body.input);
    const rewrite = input.endpoint === 'chat' ? chatAnswerRewriteOf(channel) : undefined;
    const answer = { path, model, headers: {}, ...(rewrite ? { rewrite } : {}) };
    if (input.passThrough) return { ...answer, body: { kind: 'json', json: body } };
    if (input.endpoint === 'chat') body.model = applyReasoningConventions(body, input.upstreamModel);
    if (USAGE_CHUNK_ENDPOINTS.has(input.endpoint)) {
      if (input.isStream) {
        const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
        body.stream_options = { ...streamOptions, include_usage: true };
      } else {
        delete body.stream_options;
      }
    }
    if (channel.paramOverride) Object.assign(body, channel.paramOverride);
    return { ...answer, body: { kind: 'json', json: body } };
  },
  readError: parseUpstreamError,
  usageOf: openAiAnswerUsage,
  // The canonical shape is OpenAI's own.
  answerToChat: (answer) => ({ answer: { ...answer }, usage: openAiAnswerUsage(answer) }),
  streamToChat: createOpenAiChatDecoder,
  // OpenAI's embeddings list is the canonical embeddings answer (a Gemini client's embedContent converts from it).
  answerToEmbeddings: (answer) => ({ answer: { ...answer }, usage: normaliseOpenAiUsage(answer.usage) }),
};

/**
 * Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest): the key is a service-account
 * JSON document, exchanged for an access token (token.ts) sent as a bearer; the project is the account's, the
 * region the channel's `other` (a name, or `{"default": region, "<model>": region}`); the host
 * `https://<region>-aiplatform.googleapis.com` (`aiplatform.googleapis.com` for `global`), or the channel's base
 * URL when set (private endpoints, tests).
 * - Gemini (publisher `google`) in Gemini's format: `…/publishers/google/models/<m>:generateContent`,
 *   `:streamGenerateContent?alt=sse`, `:countTokens`.
 * - Claude (publisher `anthropic`) in Anthropic's format: `…/publishers/anthropic/models/<m>:rawPredict` and
 *   `:streamRawPredict`, the model in the path, not the body, and `anthropic_version: vertex-2023-10-16` in the
 *   body (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude). Anthropic's
 *   dated names become Vertex's (`claude-3-5-haiku-20241022` → `claude-3-5-haiku@20241022`).
 * - Embedding models (`text-embedding-005`, `gemini-embedding-001`) through `…/publishers/google/models/<m>:predict`
 *   (embeddings.ts), for OpenAI's `/v1/embeddings` and Gemini's embedContent, converted.
 */

import type { ChannelView, Endpoint } from '../../contract.ts';
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import type { FormatRequest } from '../../formats/format.ts';
import { geminiFormat } from '../../formats/gemini/format.ts';
import { callOf, credentialFailure, type Provider } from '../provider.ts';
import { isVertexEmbeddingModel, vertexEmbeddingsFormat } from './embeddings.ts';
import { createTokenCache, readServiceAccount, type ServiceAccount, TokenExchangeError } from './token.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const tokens = createTokenCache();

/** The region of a model on this channel: `other` as a name, or its JSON map's entry or default. */
export function vertexRegionOf(other: string, model: string): string | undefined {
  const text = other.trim();
  if (text === '') return undefined;
  if (!text.startsWith('{')) return text;
  try {
    const map = JSON.parse(text) as Record<string, unknown>;
    const region = map[model] ?? map.default;
    return typeof region === 'string' && region !== '' ? region : undefined;
  } catch {
    return undefined;
  }
}

/** Vertex's name of an Anthropic model: the date after `@` (the one renamed model listed). */
export function vertexClaudeModel(model: string): string {
  if (model.includes('@')) return model;
  if (model === 'claude-3-5-sonnet-20241022') return 'claude-3-5-sonnet-v2@20241022';
  return model.replace(/-(\d{8})$/, '@$1');
}

async function prepare(channel: ChannelView, model: string): Promise<{ base: string; token: string }> {
  const account = readServiceAccount(channel.key ?? '');
  if (typeof account === 'string') throw credentialFailure(account);
  const region = vertexRegionOf(channel.other, model);
  if (!region) throw credentialFailure('the Vertex AI channel names no region (other)', 400);
  const host =
    region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
  const root = (channel.baseUrl || host).replace(/\/+$/, '');
  const base = `${root}/v1/projects/${encodeURIComponent(account.project_id)}/locations/${encodeURIComponent(region)}`;
  return { base, token: await tokenOf(account) };
}

async function tokenOf(account: ServiceAccount): Promise<string> {
  try {
    return await tokens.tokenOf(account);
  } catch (error) {
    if (error instanceof TokenExchangeError) throw credentialFailure(error.message, error.status);
    throw credentialFailure('the service-account token exchange could not reach its endpoint', 502);
  }
}

const GEMINI_ENDPOINTS: ReadonlySet<Endpoint> = new Set<Endpoint>([
  'chat',
  'generate-content',
  'count-tokens-gemini',
]);

export const vertexGeminiProvider: Provider = {
  id: 'vertex',
  format: geminiFormat,
  genAiName: 'gcp.vertex_ai',
  supports: (endpoint) => GEMINI_ENDPOINTS.has(endpoint),
  retriesBadRequest: false,
  async buildRequest(channel, input) {
    const written = geminiFormat.writeRequest(channel, input);
    const { base, token } = await prepare(channel, written.model);
    const url = `${base}/publishers/google/${written.path}`;
    return callOf(written, url, { authorization: `Bearer ${token}` }, channel);
  },
  readError: (status, body) => geminiFormat.readError(status, body),
};

/** Claude's body on Vertex: no model (it is in the path), Vertex's API version instead of the header. */
function vertexClaudeBody(written: FormatRequest): FormatRequest {
  if (written.body.kind !== 'json') return written;
  const { model: _model, ...json } = written.body.json;
  const { 'anthropic-version': _version, ...headers } = written.headers;
  return {
    ...written,
    headers,
    body: { kind: 'json', json: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...json } },
  };
}

export const vertexClaudeProvider: Provider = {
  id: 'vertex',
  format: anthropicFormat,
  genAiName: 'gcp.vertex_ai',
  supports: (endpoint) => endpoint === 'messages' || endpoint === 'chat',
  retriesBadRequest: true,
  async buildRequest(channel, input) {
    const written = vertexClaudeBody(anthropicFormat.writeRequest(channel, input));
    const { base, token } = await prepare(channel, written.model);
    const action = input.isStream ? 'streamRawPredict' : 'rawPredict';
    const url = `${base}/publishers/anthropic/models/${encodeURIComponent(vertexClaudeModel(written.model)).replace('%40', '@')}:${action}`;
    return callOf(written, url, { authorization: `Bearer ${token}` }, channel);
  },
  readError: (status, body) => anthropicFormat.readError(status, body),
};

const vertexEmbeddingsProvider: Provider = {
  id: 'vertex',
  format: vertexEmbeddingsFormat,
  genAiName: 'gcp.vertex_ai',
  supports: (endpoint) => endpoint === 'embeddings',
  retriesBadRequest: false,
  async buildRequest(channel, input) {
    const written = vertexEmbeddingsFormat.writeRequest(channel, input);
    const { base, token } = await prepare(channel, written.model);
    const url = `${base}/publishers/google/models/${encodeURIComponent(written.model)}:predict`;
    return callOf(written, url, { authorization: `Bearer ${token}` }, channel);
  },
  readError: (status, body) => vertexEmbeddingsFormat.readError(status, body),
};

/** Claude models go to the Anthropic publisher, embedding models to `:predict`, every other model to Gemini's. */
export const vertexProviderFor = (model: string): Provider =>
  /^claude/i.test(model)
    ? vertexClaudeProvider
    : isVertexEmbeddingModel(model)
      ? vertexEmbeddingsProvider
      : vertexGeminiProvider;

export const vertexProvider: Provider = {
  ...vertexGeminiProvider,
  supports: (endpoint) => vertexGeminiProvider.supports(endpoint) || endpoint === 'embeddings',
  forModel: vertexProviderFor,
};

/**
 * AWS Bedrock (https://docs.aws.amazon.com/bedrock/latest/APIReference/welcome.html), host
 * `https://bedrock-runtime.<region>.amazonaws.com` or the channel's base URL; the credential is credentials.ts's.
 * Every model but Claude goes through Converse / ConverseStream (converse.ts), `/model/<id>/converse` and
 * `/converse-stream`, the model id as given (`meta.llama3-1-70b-instruct-v1:0`, `us.amazon.nova-pro-v1:0`).
 * Claude goes through InvokeModel in Anthropic's Messages shape
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html):
 * `POST /model/<id>/invoke` and `/invoke-with-response-stream` (AWS's event-stream framing, event-stream.ts), the
 * model in the path, not the body, `anthropic_version: bedrock-2023-05-31` and the beta flags as `anthropic_beta`
 * in the body. Anthropic's model names become Bedrock's ids (`claude-3-5-haiku-20241022` →
 * `anthropic.claude-3-5-haiku-20241022-v1:0`); an id already given as Bedrock's (`anthropic.…`) or as a
 * cross-region inference profile (`us.`, `eu.`, `apac.` …) goes as it is. Errors are read by their
 * `x-amzn-ErrorType` (errors.ts). Titan and Cohere embedding models through InvokeModel in their own bodies
 * (embeddings.ts), for OpenAI's `/v1/embeddings`.
 */

import type { ChannelView } from '../../contract.ts';
import { anthropicFormat } from '../../formats/anthropic/format.ts';
import type { BuildRequestInput, FormatRequest, UpstreamCall } from '../../formats/format.ts';
import { callOf, credentialFailure, type Provider } from '../provider.ts';
import { converseFormat } from './converse.ts';
import { readBedrockKey, signedHeaders } from './credentials.ts';
import { bedrockEmbeddingsFormat, isBedrockEmbeddingModel } from './embeddings.ts';
import { readBedrockError } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Anthropic's dated names whose Bedrock id is not `anthropic.<name>-v1:0`. */
const CLAUDE_IDS: Readonly<Record<string, string>> = {
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
};

/** Bedrock's model id of a model name (see the file comment): Claude's dated names mapped, others as given. */
export function bedrockModelId(model: string): string {
  if (!/^claude/i.test(model) || /:\d+$/.test(model)) return model;
  return CLAUDE_IDS[model] ?? `anthropic.${model}-v1:0`;
}

/** Claude's body on Bedrock: no model and no stream flag (both are in the path), Bedrock's version, betas in the body. */
function bedrockClaudeBody(written: FormatRequest): {
  json: Record<string, unknown>;
  headers: Record<string, string>;
} {
  const json = written.body.kind === 'json' ? written.body.json : {};
  const { model: _model, stream: _stream, ...rest } = json;
  const { 'anthropic-version': _version, 'anthropic-beta': beta, ...headers } = written.headers;
  const betas = beta
    ? beta
        .split(',')
        .map((flag) => flag.trim())
        .filter(Boolean)
    : [];
  return {
    json: {
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      ...rest,
      ...(betas.length > 0 ? { anthropic_beta: betas } : {}),
    },
    headers,
  };
}

/** The upstream call of one Bedrock operation on `modelId`: addressed, and signed or given the API key. */
async function bedrockCall(
  channel: ChannelView,
  input: BuildRequestInput,
  operation: string,
  written: FormatRequest,
  json: Record<string, unknown>,
  headers: Readonly<Record<string, string>>,
): Promise<UpstreamCall> {
  const credential = readBedrockKey(channel.key ?? '', channel.other);
  if (typeof credential === 'string') throw credentialFailure(credential);
  const host = (channel.baseUrl || `https://bedrock-runtime.${credential.region}.amazonaws.com`).replace(
    /\/+$/,
    '',
  );
  const url = `${host}/model/${encodeURIComponent(bedrockModelId(written.model))}/${operation}`;
  const accept = input.isStream ? 'application/vnd.amazon.eventstream' : 'application/json';
  if (credential.kind === 'api-key')
    return callOf(
      { ...written, headers, body: { kind: 'json', json } },
      url,
      { authorization: `Bearer ${credential.apiKey}`, accept },
      channel,
    );
  const body = JSON.stringify(json);
  const base = { ...channel.headers, ...headers, 'content-type': 'application/json', accept };
  return { url, headers: await signedHeaders(credential, url, base, body), body };
}

/**
 * Claude through InvokeModel, in Anthropic's format, less the web search server tool Bedrock does not run: a
 * client's hosted web search is left out and said so (docs/adr/0029).
 */
export const bedrockClaudeProvider: Provider = {
  id: 'bedrock',
  format: { ...anthropicFormat, hostedTools: new Set() },
  genAiName: 'aws.bedrock',
  supports: (endpoint) => endpoint === 'messages' || endpoint === 'chat',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = anthropicFormat.writeRequest(channel, input);
    const { json, headers } = bedrockClaudeBody(written);
    const operation = input.isStream ? 'invoke-with-response-stream' : 'invoke';
    return bedrockCall(channel, input, operation, written, json, headers);
  },
  readError: readBedrockError,
  reframeStream: eventStreamToSse,
};

/** Every other model through Converse / ConverseStream (converse.ts). */
export const bedrockConverseProvider: Provider = {
  id: 'bedrock',
  format: converseFormat,
  genAiName: 'aws.bedrock',
  supports: (endpoint) => endpoint === 'chat',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = converseFormat.writeRequest(channel, input);
    const json = written.body.kind === 'json' ? written.body.json : {};
    return bedrockCall(channel, input, input.isStream ? 'converse-stream' : 'converse', written, json, {});
  },
  readError: readBedrockError,
  reframeStream: eventStreamToSse,
};

/** Titan and Cohere embeddings through InvokeModel (embeddings.ts). */
const bedrockEmbeddingsProvider: Provider = {
  id: 'bedrock',
  format: bedrockEmbeddingsFormat,
  genAiName: 'aws.bedrock',
  supports: (endpoint) => endpoint === 'embeddings',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = bedrockEmbeddingsFormat.writeRequest(channel, input);
    const json = written.body.kind === 'json' ? written.body.json : {};
    return bedrockCall(channel, { ...input, isStream: false }, 'invoke', written, json, {});
  },
  readError: readBedrockError,
};

/** Claude models (by name, by Bedrock id or by inference profile) go through InvokeModel, the rest through Converse. */
export const isBedrockClaude = (model: string): boolean => /(^|\.)(anthropic\.)?claude/i.test(model);

export const bedrockProvider: Provider = {
  ...bedrockClaudeProvider,
  supports: (endpoint) => bedrockClaudeProvider.supports(endpoint) || endpoint === 'embeddings',
  forModel: (model) =>
    isBedrockEmbeddingModel(model)
      ? bedrockEmbeddingsProvider
      : isBedrockClaude(model)
        ? bedrockClaudeProvider
        : bedrockConverseProvider,
};

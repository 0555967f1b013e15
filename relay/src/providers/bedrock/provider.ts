/**
 * AWS Bedrock (https://docs.aws.amazon.com/bedrock/latest/APIReference/welcome.html), host
 * `https://bedrock-runtime.<region>.amazonaws.com` or the channel's base URL; the credential is credentials.ts's.
 * Claude goes through InvokeModel in Anthropic's Messages shape
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html):
 * `POST /model/<id>/invoke` and `/invoke-with-response-stream` (AWS's event-stream framing, event-stream.ts), the
 * model in the path, not the body, `anthropic_version: bedrock-2023-05-31` and the beta flags as `anthropic_beta`
 * in the body. Anthropic's model names become Bedrock's ids (`claude-3-5-haiku-20241022` →
 * `anthropic.claude-3-5-haiku-20241022-v1:0`); an id already given as Bedrock's (`anthropic.…`) or as a
 * cross-region inference profile (`us.`, `eu.`, `apac.` …) goes as it is. Errors are read by their
 * `x-amzn-ErrorType` (errors.ts).
 */

import { anthropicFormat } from '../../formats/anthropic/format.ts';
import type { FormatRequest } from '../../formats/format.ts';
import { callOf, credentialFailure, type Provider } from '../provider.ts';
import { readBedrockKey, signedHeaders } from './credentials.ts';
import { readBedrockError } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Anthropic's dated names whose Bedrock id is not `anthropic.<name>-v1:0`. */
const CLAUDE_IDS: Readonly<Record<string, string>> = {
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
};

/** Bedrock's model id of a model name (see the file comment). */
export function bedrockModelId(model: string): string {
  if (/^(us|eu|apac|us-gov|jp|au|global)\.|^anthropic\.|:\d+$/.test(model)) return model;
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

export const bedrockProvider: Provider = {
  id: 'bedrock',
  format: anthropicFormat,
  genAiName: 'aws.bedrock',
  supports: (endpoint) => endpoint === 'messages' || endpoint === 'chat',
  retriesBadRequest: false,
  async buildRequest(channel, input) {
    const credential = readBedrockKey(channel.key ?? '', channel.other);
    if (typeof credential === 'string') throw credentialFailure(credential);
    const written = anthropicFormat.writeRequest(channel, input);
    const { json, headers } = bedrockClaudeBody(written);
    const host = (channel.baseUrl || `https://bedrock-runtime.${credential.region}.amazonaws.com`).replace(
      /\/+$/,
      '',
    );
    const action = input.isStream ? 'invoke-with-response-stream' : 'invoke';
    const url = `${host}/model/${encodeURIComponent(bedrockModelId(written.model))}/${action}`;
    const body = JSON.stringify(json);
    const base = {
      ...channel.headers,
      ...headers,
      'content-type': 'application/json',
      accept: input.isStream ? 'application/vnd.amazon.eventstream' : 'application/json',
    };
    if (credential.kind === 'api-key')
      return callOf(
        { ...written, headers, body: { kind: 'json', json } },
        url,
        { authorization: `Bearer ${credential.apiKey}`, accept: base.accept },
        channel,
      );
    return { url, headers: await signedHeaders(credential, url, base, body), body };
  },
  readError: readBedrockError,
  reframeStream: eventStreamToSse,
};

/**
 * A wire format of an upstream's own embeddings API (Vertex AI's `:predict`, Bedrock's Titan and Cohere embed
 * through InvokeModel): no client speaks it, so it is always reached from OpenAI's `/v1/embeddings` (and Gemini's
 * embedContent) through the canonical embeddings shape, and it carries nothing else. The provider writes the body
 * from the request's texts and reads the vectors and the token count back; OpenAI's embeddings list is built here.
 */

import type { UpstreamFormat } from '@turnpike/core/providers/catalogue';
import type { NormalisedUsage, RelayError } from '../contract.ts';
import type { ChatAnswer, Json } from '../formats/canonical.ts';
import type { Format } from '../formats/format.ts';
import { EMPTY_USAGE } from '../metering/usage.ts';
import { CredentialError } from './provider.ts';

export interface EmbeddingsSpec {
  readonly id: UpstreamFormat;
  /** The upstream body for these texts (the OpenAI request at hand for `dimensions`), or a refusal. */
  write(texts: readonly string[], request: Readonly<Json>, model: string): Json;
  /** The vectors of the answer, in input order, and the tokens it says it read (undefined: not said). */
  read(answer: Readonly<Json>): { vectors: number[][]; promptTokens: number | undefined };
  readError(status: number, body: string): RelayError;
}

/** The texts of an OpenAI embeddings request (`input`: a string or strings; token arrays are refused). */
export function embeddingTexts(request: Readonly<Json>): string[] {
  const { input } = request;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string'))
    return input as string[];
  throw refuseRequest('this provider embeds text: input must be a string or a list of strings');
}

/**
 * The caller's request cannot be written for this upstream (it asks for something the upstream API cannot take):
 * the attempt ends with the caller's 400, which neither retries nor counts against the channel.
 */
export function refuseRequest(message: string): CredentialError {
  return new CredentialError({
    status: 400,
    message,
    type: 'invalid_request_error',
    code: 'unsupported_input',
    param: 'input',
    isLocal: true,
  });
}

/** The numbers of a vector field (anything else in it dropped). */
export const vectorsOf = (values: unknown): number[] =>
  Array.isArray(values) ? values.filter((v): v is number => typeof v === 'number') : [];

function toOpenAi(spec: EmbeddingsSpec, answer: Readonly<Json>, model: string): ChatAnswer {
  const { vectors, promptTokens } = spec.read(answer);
  const usage: NormalisedUsage | undefined =
    promptTokens !== undefined && promptTokens > 0 ? { ...EMPTY_USAGE, promptTokens } : undefined;
  return {
    answer: {
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model,
      ...(usage ? { usage: { prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens } } : {}),
    },
    usage,
  };
}

export function embeddingsFormat(spec: EmbeddingsSpec): Format {
  return {
    id: spec.id,
    supports: (endpoint) => endpoint === 'embeddings',
    retriesBadRequest: false,
    writeRequest(channel, input) {
      const request = input.payload.kind === 'json' ? input.payload.body : {};
      const json = spec.write(embeddingTexts(request), request, input.upstreamModel);
      if (channel.paramOverride && !input.passThrough) Object.assign(json, channel.paramOverride);
      return { path: '', model: input.upstreamModel, headers: {}, body: { kind: 'json', json } };
    },
    readError: spec.readError,
    usageOf: (answer) => toOpenAi(spec, answer, '').usage,
    answerToEmbeddings: (answer, model) => toOpenAi(spec, answer, model),
    // Never asked for chat (it supports embeddings only): an empty answer and a silent stream.
    answerToChat: (_answer, model) => ({
      answer: { object: 'chat.completion', model, choices: [] },
      usage: undefined,
    }),
    streamToChat: () => ({ push: () => ({ chunks: [] }), usage: () => undefined }),
  };
}

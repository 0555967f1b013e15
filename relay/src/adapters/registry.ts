/**
 * Which adapter speaks to a channel type, and what an adapter decides: for each endpoint, the upstream URL, the
 * headers (the channel's credential included) and the body. The pipeline hands an adapter the client's request
 * as read (OpenAI's wire format on every `/v1/*` route) and never builds a URL itself, so a native provider
 * (Anthropic, Gemini, Bedrock, ...) is one more adapter that converts the body, not a change to the pipeline.
 *
 * This slice has the OpenAI-compatible adapter only: it serves every catalogue type whose API is OpenAI's
 * (`modelList: 'openai'` in the catalogue). Channels of other types are never picked, rather than being sent a
 * body they cannot read.
 */
import type { Readable } from 'node:stream';
import { findProviderType } from '@turnpike/core/providers/catalogue';
import type { RelayChannel } from '../state/channel-cache.ts';
import { openAiAdapter } from './openai/api.ts';

/** Every relayed endpoint (one per OpenAI route; `/v1/engines/:model/embeddings` is `embeddings`). */
export type Endpoint =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'moderations'
  | 'rerank'
  | 'responses'
  | 'image-generation'
  | 'image-edit'
  | 'speech'
  | 'transcription'
  | 'translation';

/** @deprecated the name of the first slice, kept for callers that still use it. */
export type TextEndpoint = Endpoint;

/** A multipart body spooled to disk (pipeline/multipart.ts): re-readable for each attempt, never held in memory. */
export interface MultipartBody {
  /** `multipart/form-data; boundary=...`, as the client sent it. */
  readonly contentType: string;
  /** The body as a stream, with the `model` field's value replaced by `model` when given; and its length. */
  open(model?: string): { stream: Readable; length: number };
}

/** The client's request, as the endpoint read it. */
export type RequestPayload =
  | { readonly kind: 'json'; readonly body: Readonly<Record<string, unknown>> }
  | { readonly kind: 'multipart'; readonly body: MultipartBody };

export interface BuildRequestInput {
  readonly endpoint: Endpoint;
  readonly payload: RequestPayload;
  /** The model to name upstream (after the channel's model mapping). */
  readonly upstreamModel: string;
  readonly isStream: boolean;
}

/** One upstream HTTP request, ready for the upstream client. */
export interface UpstreamCall {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | Readable;
}

export type ProviderId = 'openai';

export interface Adapter {
  readonly id: ProviderId;
  /** Whether this adapter can relay the endpoint at all. */
  supports(endpoint: Endpoint): boolean;
  /** The upstream request of one attempt on `channel`. */
  buildRequest(channel: RelayChannel, input: BuildRequestInput): UpstreamCall;
}

export const adapters = { openai: openAiAdapter } satisfies Record<ProviderId, Adapter>;

/** The adapter of a channel type, or undefined when the relay cannot talk to it yet. */
export function adapterFor(type: number): Adapter | undefined {
  return findProviderType(type)?.modelList === 'openai' ? adapters.openai : undefined;
}

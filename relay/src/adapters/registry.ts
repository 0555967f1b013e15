/**
 * The upstream side of the provider seam: one adapter per upstream wire format. An adapter builds the request of
 * an attempt (URL, headers with the channel's credential, body) and reads what comes back: errors (and which are
 * retried), usage, and — when the client speaks another format — the answer and the stream, into the canonical
 * shape (canonical.ts). The client side is the ingress (../ingress/). When both sides speak the same format the
 * body goes up as the client sent it and the answer comes back unread (docs/adr/0013); otherwise it passes
 * through the canonical shape, so a format needs two converters, not one per pair (docs/adr/0018).
 */
import type { Readable } from 'node:stream';
import type { OptionKey, OptionValue } from '@turnpike/core/options/registry';
import { findProviderType, ProviderTypeId } from '@turnpike/core/providers/catalogue';
import type { RelayError } from '../errors.ts';
import type { NormalisedUsage } from '../metering/usage.ts';
import type { SseEvent } from '../sse.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import type { AnswerRewrite } from '../upstream/client.ts';
import { anthropicAdapter } from './anthropic/api.ts';
import type { ChatAnswer, ChatChunk, ChatRequest } from './canonical.ts';
import { geminiAdapter } from './gemini/api.ts';
import { openAiAdapter } from './openai/api.ts';

/**
 * Every relayed endpoint. The OpenAI ones (one per `/v1/*` route; `/v1/engines/:model/embeddings` is
 * `embeddings`), Anthropic's `messages` and `count-tokens`, and Gemini's `generate-content`, `count-tokens-gemini`
 * and `embed-content` (the model and the action are in the path).
 */
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
  | 'translation'
  | 'messages'
  | 'count-tokens'
  | 'generate-content'
  | 'count-tokens-gemini'
  | 'embed-content';

/** The wire formats the relay speaks, on either side. */
export type WireFormat = 'openai' | 'anthropic' | 'gemini';

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

/** The options an adapter may read (`claude.*`, `gemini.*`). */
export interface AdapterOptions {
  get<K extends OptionKey>(key: K): OptionValue<K>;
}

export interface BuildRequestInput {
  /** What the payload is: the client's own endpoint (same format), or `chat`/`embeddings` (canonical). */
  readonly endpoint: Endpoint;
  readonly payload: RequestPayload;
  /** The model to name upstream (after the channel's model mapping). */
  readonly upstreamModel: string;
  readonly isStream: boolean;
  readonly options: AdapterOptions;
  /**
   * `global.pass_through_request_enabled`: a request of the upstream's own format goes up exactly as the client
   * sent it (the model mapped, nothing added: no `param_override`, no forced usage chunk).
   */
  readonly passThrough?: boolean;
  /** Headers of the client's request meant for an upstream of its own format (Anthropic's `anthropic-beta`). */
  readonly clientHeaders?: Readonly<Record<string, string>> | undefined;
}

/** One upstream HTTP request, ready for the upstream client. */
export interface UpstreamCall {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | Readable;
  /** How the 200 answer is rewritten as it arrives (OpenAI `force_format`, `thinking_to_content`). */
  readonly rewrite?: AnswerRewrite;
}

/** What an upstream stream event gave, in the canonical shape. */
export interface DecodedEvent {
  /** Canonical chunks (OpenAI chat completion chunks) the event carried; often none. */
  readonly chunks: readonly ChatChunk[];
  /** The upstream says the answer is complete (`[DONE]`, `message_stop`, a finish reason). */
  readonly finished?: boolean;
  /** An error event after the 200: the stream ends with it. */
  readonly error?: RelayError;
}

/** Reads one upstream stream into canonical chunks; keeps the usage it saw. */
export interface StreamDecoder {
  push(event: SseEvent): DecodedEvent;
  /** The usage reported so far (complete once the stream finished), or undefined when none was. */
  usage(): NormalisedUsage | undefined;
}

/** The channel as an adapter sees it: read-only, and only what a request needs. */
export type AdapterChannel = Pick<
  RelayChannel,
  | 'type'
  | 'key'
  | 'baseUrl'
  | 'headers'
  | 'organization'
  | 'paramOverride'
  | 'forceFormat'
  | 'thinkingToContent'
>;

export interface Adapter {
  readonly id: WireFormat;
  /** Whether this adapter can relay the endpoint (its own endpoints, and `chat` for any other format). */
  supports(endpoint: Endpoint): boolean;
  /** The upstream request of one attempt on `channel`; a canonical payload is converted first. */
  buildRequest(channel: AdapterChannel, input: BuildRequestInput): UpstreamCall;
  /** An error answer (status ≠ 200) as a RelayError: message, type and code, for retries and disabling. */
  readError(status: number, body: string): RelayError;
  /** Whether a 400 from this upstream may be a passing overload (Anthropic's), so another channel is tried. */
  readonly retriesBadRequest: boolean;
  /** Usage of a 200 JSON answer in this format. */
  usageOf(answer: Readonly<Record<string, unknown>>): NormalisedUsage | undefined;
  /** A 200 JSON answer of the `chat` endpoint, in the canonical shape. */
  answerToChat(answer: Readonly<Record<string, unknown>>, model: string): ChatAnswer;
  /** A stream decoder for the `chat` endpoint's stream (and for reading usage of a same-format stream). */
  streamToChat(model: string): StreamDecoder;
  /** A 200 answer of the `embeddings` endpoint as OpenAI's embeddings list (adapters that convert embeddings). */
  answerToEmbeddings?(answer: Readonly<Record<string, unknown>>, model: string): ChatAnswer;
}

export const adapters = {
  openai: openAiAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
} satisfies Record<WireFormat, Adapter>;

/** The adapter of a channel type, or undefined when the relay cannot talk to it. */
export function adapterFor(type: number): Adapter | undefined {
  if (type === ProviderTypeId.Anthropic) return adapters.anthropic;
  if (type === ProviderTypeId.Gemini) return adapters.gemini;
  return findProviderType(type)?.modelList === 'openai' ? adapters.openai : undefined;
}

export type { ChatAnswer, ChatChunk, ChatRequest };

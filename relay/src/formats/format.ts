/**
 * A wire format, upstream side: how a request of the format is written (its body, its path within the format's
 * API, its own headers such as `anthropic-version`) and how what comes back is read: errors, usage, and — when the
 * client speaks another format — the answer and the stream, into the canonical shape (canonical.ts). Where the
 * request is sent and how it is signed is the provider's (../providers/). The client side of a format is its
 * ingress (ingress.ts). When both sides speak the same format the body goes up as the client sent it and the
 * answer comes back unread (docs/adr/0013); otherwise through the canonical shape (docs/adr/0018, 0024).
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { OptionKey, OptionValue } from '@turnpike/core/options/registry';
import type { UpstreamFormat, WireFormat } from '@turnpike/core/providers/catalogue';
import type { ChannelView, Endpoint, NormalisedUsage, RelayError, RequestPayload } from '../contract.ts';
import type { SseEvent } from '../sse.ts';
import type { AnswerRewrite } from '../upstream/client.ts';
import type { ChatAnswer, ChatChunk, ChatRequest, HostedToolKind } from './canonical.ts';

/** The wire formats the relay speaks, on either side (declared in the catalogue). */
export type { WireFormat };

/** The options a format may read (`claude.*`, `gemini.*`). */
export interface FormatOptions {
  get<K extends OptionKey>(key: K): OptionValue<K>;
}

export interface BuildRequestInput {
  /** What the payload is: the client's own endpoint (same format), or `chat`/`embeddings` (canonical). */
  readonly endpoint: Endpoint;
  readonly payload: RequestPayload;
  /** The model to name upstream (after the channel's model mapping). */
  readonly upstreamModel: string;
  readonly isStream: boolean;
  readonly options: FormatOptions;
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

/** One request written in a format, before a provider addresses and signs it. */
export interface FormatRequest {
  /**
   * The path within the format's API: OpenAI `/v1/chat/completions`, Anthropic `/v1/messages`, Gemini
   * `models/<model>:generateContent` (the provider puts the version or the project before it).
   */
  readonly path: string;
  /** The model the body names (after a format's own model suffixes, e.g. Gemini's `-thinking`). */
  readonly model: string;
  /** The body: a JSON object, or a multipart upload streamed from its spool. */
  readonly body:
    | { readonly kind: 'json'; readonly json: Record<string, unknown> }
    | {
        readonly kind: 'multipart';
        readonly stream: Readable;
        readonly length: number;
        readonly contentType: string;
      };
  /** Headers of the format itself (`anthropic-version`, `anthropic-beta`), before the credential. */
  readonly headers: Readonly<Record<string, string>>;
  /** How the 200 answer is rewritten as it arrives (OpenAI `force_format`, `thinking_to_content`). */
  readonly rewrite?: AnswerRewrite;
}

/**
 * A format's id: a wire format clients speak, or one only an upstream speaks (Bedrock's Converse, Dify), which is
 * always reached through the canonical shape (declared in the catalogue).
 */
export type FormatId = UpstreamFormat;

export interface Format {
  readonly id: FormatId;
  /**
   * Whether this format's answers and stream chunks are the canonical shape itself (OpenAI's chat completions and
   * Responses events): a stream of it that needs no conversion is read as it is, not decoded.
   */
  readonly isCanonical?: boolean;
  /** Whether this format can carry the endpoint (its own endpoints, and `chat` for any other client format). */
  supports(endpoint: Endpoint): boolean;
  /** The request of one attempt in this format; a canonical payload is converted first. */
  writeRequest(channel: ChannelView, input: BuildRequestInput): FormatRequest;
  /** An error answer (status ≠ 200) as a RelayError: message, type and code, for retries and disabling. */
  readError(status: number, body: string): RelayError;
  /**
   * The client's hosted tools (canonical.ts `hosted_tools`) this format runs an equivalent of when it writes a
   * canonical request; any other is left out of the request by the pipeline and the client told (docs/adr/0029).
   */
  readonly hostedTools?: ReadonlySet<HostedToolKind>;
  /** Whether a 400 in this format may be a passing overload (Anthropic's), so another channel is tried. */
  readonly retriesBadRequest: boolean;
  /** Usage of a 200 JSON answer in this format. */
  usageOf(answer: Readonly<Record<string, unknown>>): NormalisedUsage | undefined;
  /**
   * The service tier an answer's headers name, for a format whose body does not (the Gemini API's
   * `x-gemini-service-tier`); billed when the usage names none (docs/adr/0042).
   */
  serviceTierOf?(headers: IncomingHttpHeaders): string | undefined;
  /** A 200 JSON answer of the `chat` endpoint, in the canonical shape. */
  answerToChat(answer: Readonly<Record<string, unknown>>, model: string): ChatAnswer;
  /** A stream decoder for the `chat` endpoint's stream (and for reading usage of a same-format stream). */
  streamToChat(model: string): StreamDecoder;
  /** A 200 answer of the `embeddings` endpoint as OpenAI's embeddings list (formats that convert embeddings). */
  answerToEmbeddings?(answer: Readonly<Record<string, unknown>>, model: string): ChatAnswer;
}

/** A format request's body as the bytes (or the upload stream) the upstream gets, and its content headers. */
export function serialiseBody(request: FormatRequest): {
  body: string | Readable;
  headers: Record<string, string>;
} {
  const { body } = request;
  if (body.kind === 'multipart')
    return {
      body: body.stream,
      headers: { 'content-type': body.contentType, 'content-length': String(body.length) },
    };
  return { body: JSON.stringify(body.json), headers: { 'content-type': 'application/json' } };
}

export type { ChatAnswer, ChatChunk, ChatRequest };

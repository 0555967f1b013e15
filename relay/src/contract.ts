/**
 * The words every floor of the relay shares (docs/adr/0047): the call's request and reply as the pipeline uses
 * them, a relay error, the usage billing settles, the channel as a format sees it, an endpoint's spec and the
 * client's format (its ingress). It imports nothing of the relay, so any floor may import it without a circle.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { ImageRequest, TokenUsage } from '@turnpike/core/billing/settle';
import type { Json } from '@turnpike/core/json';
import type { WireFormat } from '@turnpike/core/providers/catalogue';
import type { FastifyBaseLogger } from 'fastify';

export type { Json };

/** A canonical chat request: OpenAI's chat completion request (formats/canonical.ts). */
export type ChatRequest = Json;

/** A canonical stream chunk: OpenAI's chat completion chunk. */
export type ChatChunk = Json;

/**
 * A failed attempt, whatever produced it. `isLocal` marks errors the gateway raised itself (validation, pricing,
 * balance, sensitive words): they are never retried on another channel and never count against a channel.
 */
export interface RelayError {
  /** HTTP status to answer with (after the channel's status-code mapping). */
  readonly status: number;
  readonly message: string;
  /** OpenAI error `type`: the upstream's, or `upstream_error` / `new_api_error` style defaults. */
  readonly type: string;
  readonly code: string | number | null;
  readonly param: string | null;
  readonly isLocal: boolean;
  /** Sent as `Retry-After` (seconds) when set: a refusal the caller may retry soon. */
  readonly retryAfterSeconds?: number;
  /** How long the upstream asked to be left alone (a 429's `retry-after`, where its provider honours one). */
  readonly upstreamRetryAfterSeconds?: number;
}

/**
 * What billing settles, tokens and the rest of what the answer reports (`serviceTier`, `webSearchCalls`,
 * `imageCount`, from TokenUsage: absent where the answer says nothing of them; docs/adr/0042).
 */
export interface NormalisedUsage extends TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number;
  readonly cacheWriteTokens: number;
  /** Anthropic's 1-hour cache writes (⊂ cacheWriteTokens); 0 where a provider does not tell. */
  readonly cacheWrite1hTokens: number;
  readonly audioInputTokens: number;
  readonly audioOutputTokens: number;
  /** Reasoning tokens (⊂ completionTokens, billed as completion). */
  readonly reasoningTokens: number;
  /** Where the numbers came from: the upstream's report, or our own count when it sent none. */
  readonly source: 'upstream' | 'counted';
}

export interface RelayRequest {
  readonly id: string;
  /** The client's address (the forwarded one when TRUST_PROXY is set). */
  readonly ip: string;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body; a multipart upload is handed over unread (the stream itself). */
  body: unknown;
  /** Path parameters (`/v1/engines/:model/embeddings`). */
  readonly params?: unknown;
  readonly raw: IncomingMessage;
  /** A logger bound to the request id. */
  readonly log: FastifyBaseLogger;
  /** The route pattern, the metrics' route label. */
  readonly routeOptions: { readonly url?: string | undefined };
}

export interface RelayReply {
  readonly raw: ServerResponse;
  /** Whether the answer is out of the reply's hands: ended, or taken over (`hijack`) to be written raw. */
  readonly sent: boolean;
  code(status: number): RelayReply;
  header(name: string, value: string | string[]): RelayReply;
  removeHeader(name: string): RelayReply;
  getHeaders(): Record<string, unknown>;
  /** An object is sent as JSON, a string or buffer as is, a readable stream piped. */
  send(payload?: unknown): RelayReply;
  /** The caller writes the answer to `raw` itself. */
  hijack(): RelayReply;
}

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
  | 'responses-compact'
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

/** A multipart body spooled to disk (formats/multipart.ts): re-readable for each attempt, never held in memory. */
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

/**
 * The channel as a format and a provider see it: read-only, and only what a request needs. `other` is the type's
 * extra field (Azure's API version, Vertex's region, Cloudflare's account id). The relay's cached channel
 * (state/channel-cache.ts) is one.
 */
export interface ChannelView {
  readonly id: number;
  readonly type: number;
  /** The opened key of this call (one key of a multi-key channel); undefined when it could not be opened. */
  readonly key: string | undefined;
  readonly baseUrl: string;
  readonly other: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly organization: string | undefined;
  readonly paramOverride: Readonly<Record<string, unknown>> | undefined;
  readonly forceFormat?: boolean;
  readonly thinkingToContent?: boolean;
}

/** Writes a canonical stream in a client's format. One per streamed answer (it keeps the answer's state). */
export interface StreamEncoder {
  /** Whether the relay's `: x-turnpike-quota: <n>` comment goes into the stream (OpenAI clients). */
  readonly quotaComment: boolean;
  /** One canonical chunk; `raw` is its JSON text when it came unchanged from an OpenAI upstream. */
  chunk(chunk: ChatChunk, raw?: string): string;
  /** The output is complete: closing events, with the usage when the client's format carries it. */
  end(usage: NormalisedUsage, usageShown: boolean): string;
  /** The whole answer the closing events carried (a Responses `response` object), once `end` has run. */
  answer?(): Json | undefined;
  /** The answer ends early with this error (the client's error event). */
  error(error: RelayError): string;
  /** The very last frame of a stream that ended normally (`data: [DONE]`), or ''. */
  readonly done: string;
  /** The stream's content type when it is not `text/event-stream` (Gemini's JSON-array streams). */
  readonly contentType?: string | undefined;
  /**
   * How an event of an upstream of the client's own format is passed on (its data, credentials removed);
   * default: as the server-sent event it came as.
   */
  passEvent?(data: string): string;
}

export interface Ingress {
  readonly format: WireFormat;
  /** The caller's API key (no `Bearer ` prefix), or undefined. */
  keyOf(request: RelayRequest): string | undefined;
  /** An error as the body the client's SDK reads. */
  errorBody(error: RelayError, requestId: string): unknown;
  /** The client's request as the canonical chat request (for an upstream of another format). */
  toChat(body: Readonly<Json>, model: string, isStream: boolean): ChatRequest;
  /**
   * Why this request cannot go to an upstream of another format (a built-in tool only the client's own provider
   * runs, state the gateway does not keep), as a 400 naming what; undefined when it converts. Such a channel is
   * skipped; when no channel of the client's format serves the model, the caller gets this refusal.
   */
  refuseConversion?(body: Readonly<Json>): RelayError | undefined;
  /**
   * A canonical chat answer in the client's format; `usage` is the bill's, `body` the client's request (which
   * tool a call answers: Responses' custom tools).
   */
  fromChat(answer: Json, usage: NormalisedUsage, model: string, body?: Readonly<Json>): Json;
  /** A stream encoder for one answer (`url`: the client's request URL, for options in its query). */
  streamEncoder(body: Readonly<Json>, model: string, requestId: string, url: string): StreamEncoder;
}

/** The client's request as the pipeline uses it. */
export interface PreparedRequest {
  /** The requested model: routing and billing use it (the channel may map it for the upstream). */
  readonly model: string;
  readonly payload: RequestPayload;
  readonly isStream: boolean;
  /** Input tokens counted locally: the estimate, and the usage when the upstream reports none. */
  readonly promptTokens: number;
  /** The request's own output limit (`max_tokens`, `max_output_tokens`, ...), when it names one. */
  readonly maxTokens?: number | undefined;
  /** Tokens to reserve instead of `PreConsumedQuota` when the request names no limit (audio). */
  readonly reserveTokens?: number | undefined;
  /** Text checked for sensitive words before anything is reserved. */
  readonly promptTexts: readonly string[];
  /** Image endpoints: priced per image, one price for the balance check and the charge. */
  readonly image?: ImageRequest | undefined;
  /** Appended to the log line. */
  readonly note?: string | undefined;
  /** Headers of the client's request an upstream of the client's own format should see (`anthropic-beta`). */
  readonly clientHeaders?: Readonly<Record<string, string>> | undefined;
  /** Releases what reading the request took (a spooled upload). */
  dispose?(): Promise<void>;
}

/** How a 200 answer is relayed. */
export type AnswerKind =
  /** JSON, read whole (bounded), usage from `usageOf` or counted. */
  | 'json'
  /** Bytes piped as they come (speech); the bill is known before. */
  | 'binary'
  /** JSON or text (srt, vtt, text); usage from the answer, its duration, or an estimate. */
  | 'transcription';

/**
 * How a stream of an upstream of the client's format is read: OpenAI chat/completions chunks, Responses API
 * events, or another format's events (read through its adapter, passed on as they came).
 */
export type StreamDialect = 'chat' | 'responses' | 'native';

export interface EndpointSpec {
  readonly endpoint: Endpoint;
  /** The client's format (where its key is, the shapes of answers and errors); default OpenAI chat's. */
  readonly ingress?: Ingress;
  /**
   * The endpoint a request goes to an upstream of another format as, through the canonical shape (`chat`, or
   * OpenAI's `embeddings` request and answer); undefined: only upstreams of the client's format can serve it.
   */
  readonly canonical?: 'chat' | 'embeddings';
  /**
   * Token counting endpoints (Anthropic's `count_tokens`, Gemini's `countTokens`): the answer a channel of another
   * format gets from the relay's own count instead (free, as the providers' own are).
   */
  countLocally?(prepared: PreparedRequest): Json;
  /** Reads and checks the request; a RelayError is answered as is (a local 400, nothing reserved). */
  prepare(request: RelayRequest): Promise<PreparedRequest | RelayError> | PreparedRequest | RelayError;
  readonly answer: AnswerKind;
  /** The stream format, for endpoints that can stream. */
  readonly stream?: StreamDialect;
  /** Usage of a JSON answer; undefined (or no tokens) means it is counted. */
  usageOf?(answer: Json): NormalisedUsage | undefined;
  /**
   * Visits the output texts of a JSON answer; `edit` returns the text to put back (for masking sensitive
   * words), or its argument unchanged when only reading.
   */
  visitOutput?(answer: Json, edit: (text: string) => string): void;
  /** Output text counted when the upstream reports no usage (tool calls included). Default: visitOutput. */
  countedOutput?(answer: Json): string;
}

export const isRelayError = (value: unknown): value is RelayError =>
  typeof value === 'object' && value !== null && 'status' in value && 'isLocal' in value;

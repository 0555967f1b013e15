/**
 * What the shared pipeline (pipeline/relay.ts) needs to know about one endpoint: how to read the client's request
 * (`prepare`) and how a 200 answer is relayed and metered. Everything else — auth, rate limit, pricing, the
 * reservation, attempts over channels, settlement, the log — is the same for every endpoint.
 */
import type { ImageRequest } from '@turnpike/core/billing/settle';
import type { RelayError } from '../../errors.ts';
import type { Endpoint, RequestPayload } from '../../formats/format.ts';
import type { Ingress } from '../../formats/ingress.ts';
import type { NormalisedUsage } from '../../metering/usage.ts';
import type { RelayRequest } from '../exchange.ts';
import type { Json } from '../respond.ts';

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

/**
 * What one upstream provider adds on top of a wire format (docs/adr/0024): where a request goes (base URL and
 * paths), the credential (a header, a token exchange, a request signature), the stream framing when it is not
 * SSE, and how its errors are classified (which retry, cool the channel down, or disable it). The body, the
 * answer, the stream events and the usage are the format's (../formats/<wire>/).
 */

import type { IncomingHttpHeaders } from 'node:http';
import { findProviderType, type RelayProviderId } from '@turnpike/core/providers/catalogue';
import type { ChannelView, Endpoint, RelayError } from '../contract.ts';
import type { BuildRequestInput, Format, FormatRequest, UpstreamCall } from '../formats/format.ts';
import { serialiseBody } from '../formats/format.ts';
import type { UpstreamBody, UpstreamResponse } from '../upstream/client.ts';

export interface Provider {
  readonly id: RelayProviderId;
  /** The wire format its bodies, answers and streams are in. */
  readonly format: Format;
  /** OpenTelemetry's `gen_ai.provider.name`. */
  readonly genAiName: string;
  /** Whether this provider can carry the endpoint (usually: whether its format can). */
  supports(endpoint: Endpoint): boolean;
  /** The upstream request of one attempt on `channel`: the format writes the body, the provider addresses and signs it. */
  buildRequest(channel: ChannelView, input: BuildRequestInput): UpstreamCall | Promise<UpstreamCall>;
  /** An error answer (status ≠ 200) as a RelayError, classified the provider's way (its headers at hand). */
  readError(status: number, body: string, headers: IncomingHttpHeaders): RelayError;
  /** Whether a 400 from this provider may be a passing overload, so another channel is tried. */
  readonly retriesBadRequest: boolean;
  /**
   * Whether a 403 from this provider means the key is revoked, so the channel is disabled (Gemini's; other
   * providers answer 403 for one request's refusal, reference §4.7).
   */
  readonly forbiddenMeansRevokedKey?: boolean;
  /** The provider serving one model, where it depends on the model (Vertex: Gemini or Claude publisher). */
  forModel?(model: string): Provider;
  /** The stream as SSE bytes, for a provider whose stream framing is another (AWS's event stream). */
  reframeStream?(body: UpstreamBody): UpstreamBody;
  /**
   * A non-stream 200 answer of a provider that reports errors inside it (Wenxin's `error_code`), given the status
   * the error stands for, so it is classified like any error answer (retried, cooling or disabling the channel).
   */
  checkAnswer?(response: UpstreamResponse): Promise<UpstreamResponse>;
}

/** The most of a 200 answer read to look for an error in it (what the relay reads of any JSON answer). */
const ANSWER_LIMIT = 64 * 1024 * 1024;

/**
 * The 200 answer, read whole, with the status `statusOf` finds in its JSON (undefined: it stays a 200). The text is
 * kept, so whoever reads the answer next reads the same bytes.
 */
export async function answerWithStatus(
  response: UpstreamResponse,
  statusOf: (answer: unknown) => number | undefined,
): Promise<UpstreamResponse> {
  let text: string;
  try {
    text = await response.readText(ANSWER_LIMIT);
  } catch (error) {
    // The caller's reading of the answer meets the same failure.
    return { ...response, readText: () => Promise.reject(error), discard: async () => {} };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const status = statusOf(parsed) ?? response.status;
  const bytes = Buffer.from(text);
  const body: UpstreamBody = {
    ended: true,
    async *[Symbol.asyncIterator]() {
      yield bytes;
    },
  };
  return {
    status,
    headers: response.headers,
    body,
    readText: async (limit) => (limit === undefined ? text : bytes.subarray(0, limit).toString('utf8')),
    discard: async () => {},
  };
}

/** The channel's base URL, or its type's default, without a trailing slash. */
export function baseUrlOf(channel: ChannelView, fallback = ''): string {
  const base = channel.baseUrl || findProviderType(channel.type)?.defaultBaseUrl || fallback;
  return base.replace(/\/+$/, '');
}

/** The upstream call of a format request: the URL, the channel's extra headers, the format's, the credential's. */
export function callOf(
  written: FormatRequest,
  url: string,
  credential: Readonly<Record<string, string>>,
  channel: ChannelView,
): UpstreamCall {
  const { body, headers } = serialiseBody(written);
  return {
    url,
    headers: { ...channel.headers, ...written.headers, ...credential, ...headers },
    body,
    ...(written.rewrite ? { rewrite: written.rewrite } : {}),
  };
}

/** A provider that adds only a base URL and a credential header to a format. */
export function plainProvider(spec: {
  readonly id: RelayProviderId;
  readonly format: Format;
  readonly genAiName: string;
  readonly url: (channel: ChannelView, written: FormatRequest, input: BuildRequestInput) => string;
  readonly credential: (channel: ChannelView) => Record<string, string>;
}): Provider {
  const { format } = spec;
  return {
    id: spec.id,
    format,
    genAiName: spec.genAiName,
    supports: (endpoint) => format.supports(endpoint),
    buildRequest(channel, input) {
      const written = format.writeRequest(channel, input);
      return callOf(written, spec.url(channel, written, input), spec.credential(channel), channel);
    },
    readError: (status, body) => format.readError(status, body),
    retriesBadRequest: format.retriesBadRequest,
  };
}

/**
 * The channel's credential could not be made (a key that does not parse, a token exchange the provider refused):
 * the attempt fails with `error` as if the upstream had answered it, so it is retried or disables the channel
 * by the same rules.
 */
export class CredentialError extends Error {
  readonly error: RelayError;
  constructor(error: RelayError) {
    super(error.message);
    this.name = 'CredentialError';
    this.error = error;
  }
}

/** A credential failure: 401 `authentication_error` (the key is unusable), or the exchange's 5xx (retried). */
export function credentialFailure(message: string, status = 401): CredentialError {
  const isKeyProblem = status < 500;
  return new CredentialError({
    status: isKeyProblem ? 401 : 502,
    message,
    type: isKeyProblem ? 'authentication_error' : 'upstream_error',
    code: isKeyProblem ? 'invalid_credential' : 'credential_exchange_failed',
    param: null,
    isLocal: false,
  });
}

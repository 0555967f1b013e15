/**
 * The one client for a server-side request to an address a user chose (a webhook): it cannot be aimed at the
 * gateway's own network (docs/adr/0039).
 *
 * - The host name is resolved once, every address it has is checked against the blocked ranges
 *   (`address-ranges.ts`) less the ones root allows (`fetch_setting.allowed_ranges`), and the socket is opened
 *   to the first checked address: no second lookup can answer differently. Host header and TLS server name stay
 *   the name.
 * - Only http and https; redirects are not followed (a 3xx is the caller's failure); the whole call is bounded by
 *   a timeout and at most `maxResponseBytes` of the answer are read.
 * - A failure says only what a user may know: the address is not allowed (a literal blocked address or
 *   `localhost`, as typed), could not be reached (DNS failure, refused, reset, timeout, and a name that resolves
 *   into a blocked range alike, so it can probe neither ports nor internal names), or what status it answered. The detail is the
 *   error's `cause`, for the server log.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector, Client } from 'undici';
import type { OptionReader } from '../options/registry.ts';
import { type AddressRange, parseRange, refusedRangeOf } from './address-ranges.ts';

/** Every address a host name resolves to, as `dns.lookup(name, { all: true })` answers. */
export type ResolveHost = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const resolveWithDns: ResolveHost = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** What root allows: the check on or off, and the ranges allowed despite being blocked. */
export interface OutboundPolicy {
  readonly isProtected: boolean;
  readonly allowed: readonly AddressRange[];
}

const policies = new WeakMap<readonly string[], readonly AddressRange[]>();

/** The policy of the `fetch_setting.*` options; the parsed ranges are kept per stored list. */
export function outboundPolicyOf(read: OptionReader): OutboundPolicy {
  const list = read('fetch_setting.allowed_ranges');
  let allowed = policies.get(list);
  if (!allowed) {
    // The registry accepted every item, so none is dropped here.
    allowed = list.flatMap((text) => parseRange(text) ?? []);
    policies.set(list, allowed);
  }
  return { isProtected: read('fetch_setting.enable_ssrf_protection'), allowed };
}

/** Why a call failed, as a user may be told; `answered` is the caller's verdict on a status it did not want. */
export type GuardedFailure = 'not_allowed' | 'unreachable' | 'answered';

/** A refused or failed call; `message` is safe to show its user, `cause` is for the server log. */
export class GuardedFetchError extends Error {
  readonly failure: GuardedFailure;
  constructor(failure: GuardedFailure, message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'GuardedFetchError';
    this.failure = failure;
  }
}

export interface GuardedRequest {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export interface GuardedAnswer {
  readonly status: number;
  /** At most `maxResponseBytes` of the body; the rest is discarded. */
  readonly body: Buffer;
}

export interface GuardedFetchOptions {
  readonly policy: () => OutboundPolicy;
  /** What the user calls the address, starting messages: "the webhook". */
  readonly subject: string;
  /** Tests answer with chosen addresses; default the system resolver. */
  readonly resolve?: ResolveHost;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
}

export type GuardedFetch = (request: GuardedRequest) => Promise<GuardedAnswer>;

/** A URL a user may give: http or https with a host; the URL parser has normalised odd IPv4 spellings. */
function parseTarget(text: string): URL | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  return url && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname ? url : undefined;
}

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Names that are the machine itself whatever DNS says (RFC 6761 section 6.3). */
const isLocalName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * What is wrong with an address a user is saving, or undefined: not http(s), `localhost`, or a literal address
 * in a blocked range root has not allowed. Names are checked again when called, since DNS can change.
 */
export function userAddressProblem(text: string, policy: OutboundPolicy): string | undefined {
  const url = parseTarget(text);
  if (!url) return 'must be an http:// or https:// address';
  if (!policy.isProtected) return undefined;
  const host = hostOf(url);
  if (isLocalName(host)) return 'must not point to this server (localhost)';
  if (isIP(host) && refusedRangeOf(host, policy.allowed))
    return 'must not point to a private, loopback, link-local or reserved address';
  return undefined;
}

/** Resolves the URL's host and checks every address; answers the one to connect to. */
async function checkedAddress(url: URL, options: GuardedFetchOptions, signal: AbortSignal): Promise<string> {
  const { subject } = options;
  const policy = options.policy();
  const host = hostOf(url);
  const notAllowed = (detail: string) =>
    new GuardedFetchError('not_allowed', `${subject} address is not allowed`, new Error(detail));
  if (policy.isProtected && isLocalName(host)) throw notAllowed(`${host} is a local name`);
  let addresses: readonly { address: string }[];
  try {
    addresses = isIP(host)
      ? [{ address: host }]
      : await beforeAbort((options.resolve ?? resolveWithDns)(host), signal);
  } catch (error) {
    throw new GuardedFetchError('unreachable', `${subject} could not be reached`, error);
  }
  const first = addresses[0]?.address;
  if (first === undefined)
    throw new GuardedFetchError('unreachable', `${subject} could not be reached`, new Error(`${host}: none`));
  if (policy.isProtected) {
    for (const { address } of addresses) {
      const refused = refusedRangeOf(address, policy.allowed);
      // A name is refused in the words of a name that does not resolve: "not allowed" would tell a user which
      // names resolve inside the gateway's network (`redis.default.svc.cluster.local`), and so map it.
      if (refused && isIP(host)) throw notAllowed(`${host} is in ${refused}`);
      if (refused)
        throw new GuardedFetchError(
          'not_allowed',
          `${subject} could not be reached`,
          new Error(`${host} resolves to ${address}, in ${refused}`),
        );
    }
  }
  return first;
}

/** The promise's result, or the signal's reason if it aborts first (a lookup cannot be cancelled). */
function beforeAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

async function readCapped(body: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk.subarray(0, limit - size));
    size += chunk.length;
    // Leaving the loop destroys the stream: the rest is never read.
    if (size >= limit) break;
  }
  return Buffer.concat(chunks);
}

/** A client for user-chosen addresses; each call opens its own connection to the address it checked. */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxResponseBytes ?? 64 * 1024;
  const connector = buildConnector({ timeout: timeoutMs });
  const unreachable = (error: unknown) =>
    new GuardedFetchError('unreachable', `${options.subject} could not be reached`, error);

  return async (request) => {
    const url = parseTarget(request.url);
    if (!url)
      throw new GuardedFetchError(
        'not_allowed',
        `${options.subject} address is not allowed`,
        new Error(`not an http(s) URL: ${request.url}`),
      );
    const signal = AbortSignal.timeout(timeoutMs);
    const address = await checkedAddress(url, options, signal);
    const host = hostOf(url);
    const client = new Client(url.origin, {
      connect: (connectOptions, callback) =>
        connector(
          {
            ...connectOptions,
            hostname: address,
            servername: isIP(host) ? undefined : host,
          },
          callback,
        ),
      pipelining: 0,
    });
    try {
      const answer = await client.request({
        path: `${url.pathname}${url.search}`,
        method: request.method ?? 'GET',
        headers: request.headers,
        body: request.body,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return { status: answer.statusCode, body: await readCapped(answer.body, maxBytes) };
    } catch (error) {
      throw unreachable(error);
    } finally {
      void client.destroy().catch(() => {});
    }
  };
}

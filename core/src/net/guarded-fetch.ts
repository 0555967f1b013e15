/**
 * The one client for a server-side request to an address a user chose (a webhook): it cannot be aimed at the
 * gateway's own network (docs/adr/0039). The same judgement checks the channel addresses an administrator below
 * root saves (`addressRefusal`) and the unsaved ones the console back end calls at once (`createCheckedDispatcher`).
 *
 * - The host name is resolved once, every address it has is checked against the blocked ranges
 *   (`address-ranges.ts`) less the ones root allows (`fetch_setting.allowed_ranges`), and the socket is opened
 *   to the first checked address: no second lookup can answer differently. Host header and TLS server name stay
 *   the name.
 * - Only http and https; redirects are not followed (a 3xx is the caller's failure); the whole call is bounded by
 *   a timeout and at most `maxResponseBytes` of the answer are read.
 * - A failure says only what a user may know: the address is not allowed (a literal blocked address or
 *   `localhost`, as typed), could not be reached (DNS failure, refused, reset, timeout, and a name that resolves
 *   into a blocked range alike, so it can probe neither ports nor internal names), or what status it answered.
 *   The detail is the error's `cause`, for the server log.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, Client, type Dispatcher } from 'undici';
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

const HTTP = ['http:', 'https:'] as const;
const DEFAULT_TIMEOUT_MS = 5_000;

/** A URL a user may give: one of `protocols` (default http and https) with a host; odd IPv4 spellings are normalised. */
function parseTarget(text: string, protocols: readonly string[] = HTTP): URL | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  return url && protocols.includes(url.protocol) && url.hostname ? url : undefined;
}

/** A host name without IPv6 brackets. */
const unbracketed = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => unbracketed(url.hostname);

/** Names that are the machine itself whatever DNS says (RFC 6761 section 6.3). */
const isLocalName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * Why a host may not be reached, without DNS: `local_name` (`localhost`), `blocked_address` (a literal address in
 * a blocked range root has not allowed); undefined when protection is off or nothing is wrong yet.
 */
function literalRefusal(host: string, policy: OutboundPolicy): HostRefusal | undefined {
  if (!policy.isProtected) return undefined;
  if (isLocalName(host)) return { reason: 'local_name', detail: `${host} is a local name` };
  const refused = isIP(host) ? refusedRangeOf(host, policy.allowed) : undefined;
  return refused ? { reason: 'blocked_address', detail: `${host} is in ${refused}` } : undefined;
}

/** Why a host may not be reached; `detail` names the address and range, for the server log only. */
export interface HostRefusal {
  /** `blocked_name`: a name with an address in a blocked range; `unresolved`: a name that has no address. */
  readonly reason: 'local_name' | 'blocked_address' | 'blocked_name' | 'unresolved';
  readonly detail: string;
  readonly cause?: unknown;
}

/**
 * Judges a host the way every request to a user-chosen address is judged: `localhost` and literal blocked
 * addresses are refused, a name is resolved once and refused if **any** of its addresses is in a blocked range
 * root has not allowed. Answers the address to connect to (the first) or the refusal; the lookup is abandoned
 * when `signal` aborts.
 */
async function judgeHost(
  host: string,
  policy: OutboundPolicy,
  resolve: ResolveHost,
  signal: AbortSignal,
): Promise<{ readonly address: string } | { readonly refusal: HostRefusal }> {
  const literal = literalRefusal(host, policy);
  if (literal) return { refusal: literal };
  if (isIP(host)) return { address: host };
  let addresses: readonly string[];
  try {
    addresses = (await beforeAbort(resolve(host), signal)).map((a) => a.address);
  } catch (cause) {
    return { refusal: { reason: 'unresolved', detail: `${host} did not resolve`, cause } };
  }
  const [first] = addresses;
  if (first === undefined) return { refusal: { reason: 'unresolved', detail: `${host}: none` } };
  if (policy.isProtected) {
    for (const address of addresses) {
      const refused = refusedRangeOf(address, policy.allowed);
      if (refused)
        return {
          refusal: { reason: 'blocked_name', detail: `${host} resolves to ${address}, in ${refused}` },
        };
    }
  }
  return { address: first };
}

/**
 * What is wrong with an address a user is saving, or undefined: not http(s), `localhost`, or a literal address
 * in a blocked range root has not allowed. Names are checked again when called, since DNS can change.
 */
export function userAddressProblem(text: string, policy: OutboundPolicy): string | undefined {
  const url = parseTarget(text);
  if (!url) return 'must be an http:// or https:// address';
  const refusal = literalRefusal(hostOf(url), policy);
  if (refusal?.reason === 'local_name') return 'must not point to this server (localhost)';
  if (refusal) return 'must not point to a private, loopback, link-local or reserved address';
  return undefined;
}

interface AddressCheckOptions {
  /** Tests answer with chosen addresses; default the system resolver. */
  readonly resolve?: ResolveHost | undefined;
  /** URL schemes accepted, with their colon; default http: and https:. */
  readonly protocols?: readonly string[];
  readonly timeoutMs?: number;
}

/**
 * Why an address a role below root saves may not be reached now (docs/adr/0039), or undefined: `scheme` when it is
 * not one of `protocols`, else what {@link judgeHost} refuses, the name resolved (all its addresses, bounded by
 * `timeoutMs`). It cannot see a name's later DNS answers; a caller that connects at once uses
 * {@link createCheckedDispatcher} as well.
 */
export async function addressRefusal(
  text: string,
  policy: OutboundPolicy,
  options: AddressCheckOptions = {},
): Promise<HostRefusal | { readonly reason: 'scheme'; readonly detail: string } | undefined> {
  const url = parseTarget(text, options.protocols);
  if (!url) return { reason: 'scheme', detail: 'not an accepted scheme' };
  if (!policy.isProtected) return undefined;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const judged = await judgeHost(hostOf(url), policy, options.resolve ?? resolveWithDns, signal);
  return 'refusal' in judged ? judged.refusal : undefined;
}

/** Opens the socket to the checked `address`; the Host header and the TLS server name stay the name `host`. */
function connectChecked(
  connector: buildConnector.connector,
  connectOptions: buildConnector.Options,
  address: string,
  host: string,
  callback: buildConnector.Callback,
): void {
  connector({ ...connectOptions, hostname: address, servername: isIP(host) ? undefined : host }, callback);
}

/**
 * An undici dispatcher that judges every host it connects to ({@link judgeHost}) and connects to the address it
 * checked, Host header and TLS server name left as the name: a request through it cannot reach a blocked range,
 * whatever a second DNS answer says. A refusal fails the request as a connection error whose cause is a
 * {@link GuardedFetchError}. Close it when done.
 */
export function createCheckedDispatcher(
  options: { readonly policy: () => OutboundPolicy; readonly subject: string } & AddressCheckOptions,
): Dispatcher {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connector = buildConnector({ timeout: timeoutMs });
  return new Agent({
    connect: (connectOptions, callback) => {
      const host = unbracketed(connectOptions.hostname);
      judgeHost(
        host,
        options.policy(),
        options.resolve ?? resolveWithDns,
        AbortSignal.timeout(timeoutMs),
      ).then(
        (judged) => {
          if ('refusal' in judged) {
            const { refusal } = judged;
            return callback(
              new GuardedFetchError(
                'not_allowed',
                `${options.subject} address is not allowed`,
                refusal.cause ?? new Error(refusal.detail),
              ),
              null,
            );
          }
          connectChecked(connector, connectOptions, judged.address, host, callback);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
      );
    },
  });
}

/** Resolves the URL's host and checks every address; answers the one to connect to. */
async function checkedAddress(url: URL, options: GuardedFetchOptions, signal: AbortSignal): Promise<string> {
  const { subject } = options;
  const host = hostOf(url);
  const judged = await judgeHost(host, options.policy(), options.resolve ?? resolveWithDns, signal);
  if ('address' in judged) return judged.address;
  const { reason, detail, cause } = judged.refusal;
  if (reason === 'local_name' || reason === 'blocked_address')
    throw new GuardedFetchError('not_allowed', `${subject} address is not allowed`, new Error(detail));
  // A name is refused as a name that does not resolve, in words and in kind (so it is retried alike, and the time
  // its failure shows up tells nothing either): "not allowed" would tell a user which names resolve inside the
  // gateway's network (`redis.default.svc.cluster.local`), and so map it.
  throw new GuardedFetchError('unreachable', `${subject} could not be reached`, cause ?? new Error(detail));
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
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
        connectChecked(connector, connectOptions, address, host, callback),
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

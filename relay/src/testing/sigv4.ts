/**
 * AWS Signature Version 4 written from AWS's description of it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html), with node:crypto's SHA-256 and
 * HMAC only: the fake Bedrock front door checks the relay's signatures with this, not with the signer the relay
 * signs with, and providers/bedrock/sigv4-suite.test.ts holds it to AWS's published test suite.
 */
import { createHash, createHmac } from 'node:crypto';

/** A request as it arrived: the path and query exactly as on the wire, the headers the signature covers. */
export interface SigV4Request {
  readonly method: string;
  /** The path as sent (percent-escapes kept), without the query. */
  readonly path: string;
  /** The query as sent, without `?` (`''` when there is none). */
  readonly query: string;
  /** The signed headers' values, by lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array;
}

/** RFC 3986 escaping as SigV4 wants it: everything but `A-Z a-z 0-9 - _ . ~`, hex in upper case. */
const uriEscape = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const uriUnescape = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * The canonical request: method, each path segment escaped (so a path sent escaped is escaped twice, as AWS does for
 * every service but S3), the query's pairs escaped and sorted by name then value, the headers by name with their
 * values trimmed and inner runs of spaces made one, the list of signed headers, the hex SHA-256 of the body.
 */
export function canonicalRequestOf(request: SigV4Request): string {
  const path = request.path === '' ? '/' : request.path.split('/').map(uriEscape).join('/');
  const pairs = request.query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [uriEscape(uriUnescape(name)), uriEscape(uriUnescape(value))] as const;
    })
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  const names = Object.keys(request.headers)
    .map((name) => name.toLowerCase())
    .sort();
  const value = (name: string) =>
    (Object.entries(request.headers).find(([key]) => key.toLowerCase() === name)?.[1] ?? '')
      .trim()
      .replace(/\s+/g, ' ');
  return [
    request.method,
    path,
    pairs.map(([name, v]) => `${name}=${v}`).join('&'),
    ...names.map((name) => `${name}:${value(name)}`),
    '',
    names.join(';'),
    sha256Hex(request.body),
  ].join('\n');
}

/** The credential scope of a day, region and service. */
const scopeOf = (amzDate: string, region: string, service: string) =>
  `${amzDate.slice(0, 8)}/${region}/${service}/aws4_request`;

/** The string to sign: the algorithm, the request time, the scope, the hex SHA-256 of the canonical request. */
export function stringToSignOf(amzDate: string, region: string, service: string, canonical: string): string {
  return ['AWS4-HMAC-SHA256', amzDate, scopeOf(amzDate, region, service), sha256Hex(canonical)].join('\n');
}

export interface SigV4Key {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly service: string;
}

/** The hex signature of a string to sign: HMAC chained over the day, region, service and `aws4_request`. */
export function signatureOf(key: SigV4Key, amzDate: string, stringToSign: string): string {
  const day = hmac(`AWS4${key.secretAccessKey}`, amzDate.slice(0, 8));
  const signingKey = hmac(hmac(hmac(day, key.region), key.service), 'aws4_request');
  return createHmac('sha256', signingKey).update(stringToSign).digest('hex');
}

/** The `Authorization` header of a request signed at `amzDate` (`YYYYMMDDTHHMMSSZ`) with `key`. */
export function authorizationOf(key: SigV4Key, amzDate: string, request: SigV4Request): string {
  const canonical = canonicalRequestOf(request);
  const signature = signatureOf(key, amzDate, stringToSignOf(amzDate, key.region, key.service, canonical));
  const signed = Object.keys(request.headers)
    .map((name) => name.toLowerCase())
    .sort()
    .join(';');
  return `AWS4-HMAC-SHA256 Credential=${key.accessKeyId}/${scopeOf(amzDate, key.region, key.service)}, SignedHeaders=${signed}, Signature=${signature}`;
}

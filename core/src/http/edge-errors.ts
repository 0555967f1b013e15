/**
 * Refusals made before any route runs — a header block or request line too long for Node's parser (431, 414), a
 * path parameter longer than the router takes (414), a path that does not decode (400) — answered in the shape of
 * the route the caller was calling: the console API's envelope under `/api`, the relay's protocols under its
 * prefixes (OpenAI's error object, Anthropic's on `/v1/messages`, Gemini's on `/v1beta`, the Midjourney proxy's
 * on `/mj`, Suno-API's on `/suno`). The console API and the relay both install these, so a caller gets one shape whichever process or role answers (issue 16, item 6).
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestIdOf } from './request-id.ts';

/** Fastify's default `maxParamLength`: a longer path parameter is refused by the router. */
export const MAX_PARAM_LENGTH = 100;

const RELAY_PREFIXES = ['/v1/', '/v1beta/', '/pg/', '/dashboard/', '/mj/', '/suno/'];

/** Whose client calls a path, and so in whose shape its errors are answered. */
export type ClientProtocol =
  | 'console'
  | 'openai'
  | 'anthropic'
  | 'gemini'
  | 'midjourney'
  | 'suno'
  /** Kling's and Jimeng's own video APIs, as the reference serves them (relay/src/tasks/video/reference.ts). */
  | 'video-native'
  | 'unknown';

/**
 * The one map of path to client protocol (and so to error shape): the edge refusals here, the relay's error
 * handlers and the console API's not-found handler all read it.
 */
export function clientProtocolOf(path: string | undefined, method: string | undefined): ClientProtocol {
  if (path === undefined) return 'unknown';
  // Gemini's actions are also served as POST /v1/models/{model}:{action}.
  if (method === 'POST' && path.startsWith('/v1/models/')) return 'gemini';
  if (path === '/api' || path.startsWith('/api/') || path.startsWith('/api?')) return 'console';
  if (path === '/v1/messages' || path.startsWith('/v1/messages?') || path.startsWith('/v1/messages/'))
    return 'anthropic';
  if (path.startsWith('/v1beta/')) return 'gemini';
  if (/^\/mj(-[a-z]+)?\//.test(path)) return 'midjourney';
  if (path.startsWith('/suno/')) return 'suno';
  if (path.startsWith('/kling/') || path.startsWith('/jimeng/')) return 'video-native';
  if (RELAY_PREFIXES.some((prefix) => path.startsWith(prefix)) || path === '/v1') return 'openai';
  return 'unknown';
}

/** Stable codes of the edge refusals, as the console API's `code` and the relay's `error.code`. */
export type EdgeErrorCode =
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'BAD_URL'
  | 'BAD_REQUEST'
  | 'NOT_FOUND'
  | 'REQUEST_TIMEOUT';

const RELAY_CODES: Record<EdgeErrorCode, string> = {
  URI_TOO_LONG: 'uri_too_long',
  HEADERS_TOO_LARGE: 'request_header_fields_too_large',
  BAD_URL: 'invalid_url',
  BAD_REQUEST: 'bad_request',
  NOT_FOUND: 'not_found',
  REQUEST_TIMEOUT: 'request_timeout',
};

/**
 * The body of an edge refusal in the protocol of `path`. An unknown path (or one the parser never reached) gets
 * both the envelope's fields and OpenAI's `error` object, which either kind of client reads.
 */
export function edgeErrorBody(
  path: string | undefined,
  status: number,
  code: EdgeErrorCode,
  message: string,
  method?: string,
): Record<string, unknown> {
  const openAi = { message, type: 'invalid_request_error', param: null, code: RELAY_CODES[code] };
  switch (clientProtocolOf(path, method)) {
    case 'console':
      return { success: false, message, code };
    case 'openai':
      return { error: openAi };
    case 'anthropic':
      return { type: 'error', error: { type: 'invalid_request_error', message } };
    case 'gemini':
      return { error: { code: status, message, status: 'INVALID_ARGUMENT' } };
    case 'midjourney':
      return { code: status, description: message, type: 'turnpike_error' };
    case 'suno':
      return { code: RELAY_CODES[code], message, data: null };
    case 'video-native':
      return { code: status, message, request_id: randomUUID() };
    default:
      return { success: false, message, code, error: openAi };
  }
}

/**
 * The path (query cut off) of the request line in the packet Node's parser failed on, when that packet starts the
 * request, and whether the parser failed inside that line (`bytesParsed` is where it stopped).
 */
function readRequestLine(
  packet: unknown,
  bytesParsed: unknown,
): { method?: string; path: string | undefined; inLine: boolean } {
  if (!Buffer.isBuffer(packet) || packet.length === 0) return { path: undefined, inLine: false };
  const head = packet.subarray(0, Math.min(packet.length, 64 * 1024)).toString('latin1');
  const match = /^([A-Z]{3,10}) (\/[^ \r\n?]*)/.exec(head);
  if (!match) return { path: undefined, inLine: false };
  const lineEnd = head.indexOf('\n');
  const stopped = typeof bytesParsed === 'number' ? bytesParsed : 0;
  return { method: match[1], path: match[2], inLine: lineEnd === -1 || stopped <= lineEnd };
}

/**
 * Node's `clientError` listener (the Fastify `clientErrorHandler` option): what Fastify's default does — 408, 431,
 * else 400, then the connection is closed — with the body in the caller's shape and an `x-request-id`. A request
 * line that never ended is a URI too long (414) rather than oversized headers.
 */
export function answerClientError(
  error: Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown },
  socket: Duplex,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { method, path, inLine } = readRequestLine(error.rawPacket, error.bytesParsed);
  let status = 400;
  let code: EdgeErrorCode = 'BAD_REQUEST';
  let message = 'the request could not be read';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    code = 'REQUEST_TIMEOUT';
    message = 'the request was not received in time';
  } else if (error.code === 'HPE_HEADER_OVERFLOW' && inLine) {
    status = 414;
    code = 'URI_TOO_LONG';
    message = 'the request address is too long';
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    code = 'HEADERS_TOO_LARGE';
    message = 'the request headers are too large';
  }
  if (socket.writable) {
    const body = JSON.stringify(edgeErrorBody(path, status, code, message, method));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Why the router would refuse this path before any route ran, if it would. */
export function urlRefusal(
  path: string,
): { status: number; code: EdgeErrorCode; message: string } | undefined {
  if (path.length > MAX_PARAM_LENGTH && path.split('/').some((segment) => segment.length > MAX_PARAM_LENGTH))
    return { status: 414, code: 'URI_TOO_LONG', message: 'a part of the request address is too long' };
  if (path.includes('%')) {
    try {
      decodeURIComponent(path);
    } catch {
      return { status: 400, code: 'BAD_URL', message: 'the request address is not valid percent-encoding' };
    }
  }
  return undefined;
}

/**
 * For a server's own request listener, ahead of the router: answers (and returns true) a request whose path the
 * router would refuse with its own body (a path parameter over `MAX_PARAM_LENGTH`, undecodable percent-encoding).
 * Costs a length comparison for a usual request.
 */
export function refuseBadUrl(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '/';
  if (url.length <= MAX_PARAM_LENGTH && !url.includes('%')) return false;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const refusal = urlRefusal(path);
  if (!refusal) return false;
  const body = JSON.stringify(edgeErrorBody(path, refusal.status, refusal.code, refusal.message, req.method));
  res.writeHead(refusal.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestIdOf(req.headers),
  });
  res.end(body);
  return true;
}

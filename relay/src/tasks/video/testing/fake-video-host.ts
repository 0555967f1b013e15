/**
 * What the fake video upstreams share apart from their wire: a clip's bytes, a JSON answer, a request body read
 * whole, the clip served at a public `/cdn/` address that refuses credentials (as a provider's CDN link is fetched
 * without the channel's key), and the server's start and stop. Each provider's routes, task states and
 * authentication stay in its own fake.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An MP4's `ftyp` box and `kib` KiB of `fill`: a distinct clip per fake, checked byte for byte by the tests. */
export function fakeMp4(kib: number, fill: number): Buffer {
  return Buffer.concat([
    Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex'),
    Buffer.alloc(kib * 1024, fill),
  ]);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export interface ReadRequest {
  readonly method: string;
  readonly url: URL;
  readonly path: string;
  /** The body as sent (a signature covers it byte for byte). */
  readonly raw: string;
  readonly body: Record<string, unknown> | undefined;
}

export async function readRequest(request: IncomingMessage): Promise<ReadRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const url = new URL(request.url ?? '/', 'http://fake');
  return {
    method: request.method ?? 'GET',
    url,
    path: url.pathname,
    raw,
    body: raw === '' ? undefined : (JSON.parse(raw) as Record<string, unknown>),
  };
}

/** Answers a `/cdn/…` request with the clip (400 when it carries credentials); false for any other path. */
export function serveClip(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  clip: Buffer,
): boolean {
  if (!path.startsWith('/cdn/')) return false;
  if (request.headers.authorization !== undefined) {
    sendJson(response, 400, { message: 'no credentials here' });
    return true;
  }
  response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(clip.length) });
  response.end(clip);
  return true;
}

export interface FakeHost {
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on a free loopback port; a handler that throws answers 500 with the fake's own error body. */
export async function startFakeHost(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  errorBody: (message: string) => unknown,
): Promise<FakeHost> {
  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) => sendJson(response, 500, errorBody(String(err))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

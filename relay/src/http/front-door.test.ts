/**
 * The front door on its own, over real sockets: which requests it takes and which it leaves to the next listener,
 * and what it hands the pipeline (the parsed body, id, address, route) or answers itself (body errors, a bug).
 * The relay through the door, with billing, is tested by every relay test (their `inject` goes through the server's
 * listener) and by front-door.int.test.ts.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayRequest } from '../contract.ts';
import { readSample } from '../metrics/prometheus-text.ts';
import { createRelayMetrics } from '../metrics/relay-metrics.ts';
import { createFrontDoor, type DoorHandler } from './front-door.ts';

interface Door {
  url: string;
  seen: RelayRequest[];
  fellThrough: string[];
  logLines: Record<string, unknown>[];
  metrics: ReturnType<typeof createRelayMetrics>;
  close(): Promise<void>;
}

let open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.map((server) => new Promise((resolve) => server.close(resolve))));
  open = [];
});

/** A server whose only listener is the door, then a stand-in for Fastify that answers 299 with the path. */
async function startDoor(
  options: {
    bodyLimit?: number;
    trustProxy?: boolean;
    handler?: DoorHandler;
    metrics?: ReturnType<typeof createRelayMetrics>;
  } = {},
): Promise<Door> {
  const seen: RelayRequest[] = [];
  const fellThrough: string[] = [];
  const logLines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
  const metrics = options.metrics ?? createRelayMetrics();
  const handler: DoorHandler =
    options.handler ??
    (async (request, reply) => {
      seen.push(request);
      reply.send({ got: request.body, id: request.id, ip: request.ip, route: request.routeOptions.url });
    });
  const door = createFrontDoor({
    routes: new Map([['/v1/chat/completions', handler]]),
    metrics,
    log,
    trustProxy: options.trustProxy ?? false,
    bodyLimit: options.bodyLimit ?? 1024,
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (door.take(req, res)) return;
    fellThrough.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(299, { 'content-type': 'text/plain' }).end('next');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    fellThrough,
    logLines,
    metrics,
    close: async () => door.close(),
  };
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('the front door', () => {
  it('takes a JSON POST to its route, query string or not, and hands over the parsed body, id and route', async () => {
    const door = await startDoor();
    const response = await post(`${door.url}/v1/chat/completions?api-version=1`, '{"model":"m","n":2}', {
      'x-request-id': 'trace-123',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      got: { model: 'm', n: 2 },
      id: 'trace-123',
      ip: '127.0.0.1',
      route: '/v1/chat/completions',
    });
    // Charset parameters and case are JSON too.
    const withCharset = await post(`${door.url}/v1/chat/completions`, '{}', {
      'content-type': 'Application/JSON; charset=utf-8',
    });
    expect(withCharset.status).toBe(200);
    expect(door.fellThrough).toEqual([]);
  });

  it('gives a new id when the caller sends none or an implausible one', async () => {
    const door = await startDoor();
    const none = await post(`${door.url}/v1/chat/completions`, '{}');
    const odd = await post(`${door.url}/v1/chat/completions`, '{}', {
      'x-request-id': 'has spaces/and;more',
    });
    for (const response of [none, odd]) {
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(none.headers.get('x-request-id')).not.toBe(odd.headers.get('x-request-id'));
  });

  it('leaves every other request to the next listener, untouched', async () => {
    const door = await startDoor();
    const cases: [string, RequestInit][] = [
      ['/v1/chat/completions', { method: 'GET' }],
      ['/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }],
      [
        '/v1/chat/completions',
        { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' },
      ],
      [
        '/v1/chat/completions/',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      ],
      ['/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(`${door.url}${path}`, init);
      expect(response.status, `${init.method} ${path}`).toBe(299);
      expect(await response.text()).toBe('next');
    }
    expect(door.fellThrough).toEqual([
      'GET /v1/chat/completions',
      'POST /v1/chat/completions',
      'POST /v1/chat/completions',
      'POST /v1/chat/completions/',
      'POST /v1/embeddings',
    ]);
    expect(door.seen).toEqual([]);
  });

  it('answers a body it cannot read in OpenAI error shape, and never calls the pipeline', async () => {
    const door = await startDoor({ bodyLimit: 64 });
    const bad = await post(`${door.url}/v1/chat/completions`, '{"model":', { 'x-request-id': 'bad-1' });
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as { error: { type: string; code: string; message: string } };
    expect(badBody.error.type).toBe('invalid_request_error');
    expect(badBody.error.code).toBe('invalid_request');
    expect(badBody.error.message).toContain('(request id: bad-1)');

    const empty = await post(`${door.url}/v1/chat/completions`, '');
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain(
      'cannot be empty',
    );

    const poisoned = await post(`${door.url}/v1/chat/completions`, '{"__proto__":{"admin":true}}');
    expect(poisoned.status).toBe(400);
    expect(((await poisoned.json()) as { error: { message: string } }).error.message).toContain('prototype');
    const poisonedCtor = await post(
      `${door.url}/v1/chat/completions`,
      '{"constructor":{"prototype":{"admin":true}}}',
    );
    expect(poisonedCtor.status).toBe(400);
    // The word alone is no poison.
    const innocent = await post(`${door.url}/v1/chat/completions`, '{"content":"a constructor"}');
    expect(innocent.status).toBe(200);

    const declared = await post(`${door.url}/v1/chat/completions`, JSON.stringify({ text: 'x'.repeat(100) }));
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    // Sent in chunks without a length: refused once the running size passes the limit.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i += 1)
          controller.enqueue(new TextEncoder().encode(`{"a":"${'y'.repeat(30)}"}`));
        controller.close();
      },
    });
    const streamed = await fetch(`${door.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    // A small compressed body that expands past the limit is refused, and not inflated to the end.
    const expanding = await fetch(`${door.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ text: ' '.repeat(1_000_000) })) as unknown as BodyInit,
    });
    expect(expanding.status).toBe(413);
    expect(door.seen.map((request) => request.body)).toEqual([{ content: 'a constructor' }]);
  });

  it('answers a bug in the pipeline with a 500 that tells nothing of the inside, and logs it with the request id', async () => {
    const door = await startDoor({
      handler: async (request) => {
        request.log.info('about to fail');
        throw new Error('secret detail');
      },
    });
    const response = await post(`${door.url}/v1/chat/completions`, '{}', { 'x-request-id': 'boom-1' });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('secret detail');
    expect(JSON.parse(text).error.code).toBe('internal_error');
    const failure = door.logLines.find((line) => line.msg === 'relay request failed');
    expect(failure?.reqId).toBe('boom-1');
    expect(failure?.err).toMatchObject({ message: 'secret detail' });
    expect(door.logLines.find((line) => line.msg === 'about to fail')?.reqId).toBe('boom-1');
  });

  it('answers a 500 when the door itself fails, and the server goes on serving', async () => {
    let failing = true;
    const metrics = createRelayMetrics();
    const requestStarted = metrics.requestStarted.bind(metrics);
    const door = await startDoor({
      metrics: {
        ...metrics,
        requestStarted(route) {
          if (failing) throw new Error('door bug');
          return requestStarted(route);
        },
      },
    });
    const broken = await post(`${door.url}/v1/chat/completions`, '{}');
    expect(broken.status).toBe(500);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe('internal_error');
    expect(door.logLines.find((line) => line.msg === 'relay request failed')?.err).toMatchObject({
      message: 'door bug',
    });
    failing = false;
    expect((await post(`${door.url}/v1/chat/completions`, '{}')).status).toBe(200);
  });

  it('reads the client address from X-Forwarded-For only when told to trust the proxy', async () => {
    const forwarded = { 'x-forwarded-for': '203.0.113.7, 10.0.0.2' };
    const plain = await startDoor();
    expect(
      ((await (await post(`${plain.url}/v1/chat/completions`, '{}', forwarded)).json()) as { ip: string }).ip,
    ).toBe('127.0.0.1');
    const trusting = await startDoor({ trustProxy: true });
    expect(
      ((await (await post(`${trusting.url}/v1/chat/completions`, '{}', forwarded)).json()) as { ip: string })
        .ip,
    ).toBe('203.0.113.7');
  });

  it('counts its requests by route and status, and hands everything on once closed', async () => {
    const door = await startDoor();
    await post(`${door.url}/v1/chat/completions`, '{}');
    await post(`${door.url}/v1/chat/completions`, '{"model":');
    const text = await door.metrics.render();
    const count = (status: string) =>
      readSample(text, 'turnpike_relay_http_requests_total', { route: '/v1/chat/completions', status });
    expect(count('200')).toBe(1);
    expect(count('400')).toBe(1);
    expect(readSample(text, 'turnpike_relay_inflight_requests')).toBe(0);
    await door.close();
    expect((await post(`${door.url}/v1/chat/completions`, '{}')).status).toBe(299);
  });
});

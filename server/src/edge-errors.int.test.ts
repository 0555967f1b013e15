import net from 'node:net';
import { buildApp } from '@turnpike/api';
import { buildRelayApp, registerRelay } from '@turnpike/relay';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './testing/test-app.ts';

/**
 * Issue 16, item 6: refusals made before any route — oversized headers (431), an over-long request line or path
 * parameter (414), an undecodable path (400) — answer in the caller's shape, over real sockets, in every role.
 */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

async function sendRaw(port: number, request: string): Promise<RawAnswer> {
  const text = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('close', () => resolve(received));
    socket.on('error', (error) => (received ? resolve(received) : reject(error)));
    socket.setTimeout(5000, () => socket.destroy());
  });
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let parsed: unknown = body;
  try {
    parsed = JSON.parse(body);
  } catch {}
  return { status: Number(statusLine.split(' ')[1]), headers, body: parsed };
}

const bigHeader = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`;
const longRequestLine = (prefix: string) =>
  `GET ${prefix}${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;

const envelope = (code: string) => ({ success: false, message: expect.any(String), code });
const openAi = (code: string) => ({
  error: { message: expect.any(String), type: 'invalid_request_error', param: null, code },
});

describe('refusals before any route answer in the caller’s shape', () => {
  let t: TestApp;
  let apiOnly: FastifyInstance;
  let all: FastifyInstance;
  let relayOnly: FastifyInstance;
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    t = await createTestApp();
    apiOnly = t.app;
    all = await buildApp(t.runtime.deps);
    await registerRelay(all, t.runtime.deps, { flushIntervalMs: 20 });
    relayOnly = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    for (const [name, app] of Object.entries({ apiOnly, all, relayOnly })) {
      await app.listen({ port: 0, host: '127.0.0.1' });
      ports[name] = (app.server.address() as net.AddressInfo).port;
    }
  });
  afterAll(async () => {
    await relayOnly?.close();
    await all?.close();
    await t.close();
  });

  describe.each(['apiOnly', 'all'])('the console API (%s)', (role) => {
    it('431 in the envelope for oversized headers', async () => {
      const answer = await sendRaw(ports[role]!, bigHeader('/api/status'));
      expect(answer.status).toBe(431);
      expect(answer.body).toEqual(envelope('HEADERS_TOO_LARGE'));
      expect(answer.headers['x-request-id']).toEqual(expect.any(String));
    });

    it('414 in the envelope for an over-long request line and an over-long path parameter', async () => {
      const line = await sendRaw(ports[role]!, longRequestLine('/api/user/'));
      expect(line.status).toBe(414);
      expect(line.body).toEqual(envelope('URI_TOO_LONG'));
      const param = await sendRaw(
        ports[role]!,
        `GET /api/user/${'9'.repeat(300)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(param.status).toBe(414);
      expect(param.body).toEqual(envelope('URI_TOO_LONG'));
      expect(param.headers['x-request-id']).toEqual(expect.any(String));
    });

    it('400 in the envelope for a path that does not decode', async () => {
      const answer = await sendRaw(
        ports[role]!,
        'GET /api/user/%E0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(envelope('BAD_URL'));
    });
  });

  it('answers the same through inject, where no socket is involved', async () => {
    const long = await apiOnly.inject({ url: `/api/user/${'9'.repeat(300)}` });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual(envelope('URI_TOO_LONG'));
    const bad = await apiOnly.inject({ url: '/api/user/%E0' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual(envelope('BAD_URL'));
  });

  describe.each(['relayOnly', 'all'])('the relay (%s)', (role) => {
    it('431 in OpenAI’s shape for oversized headers', async () => {
      const answer = await sendRaw(ports[role]!, bigHeader('/v1/models'));
      expect(answer.status).toBe(431);
      expect(answer.body).toEqual(openAi('request_header_fields_too_large'));
    });

    it('414 in OpenAI’s shape for an over-long request line and an over-long model in the path', async () => {
      const line = await sendRaw(ports[role]!, longRequestLine('/v1/chat/completions?x='));
      expect(line.status).toBe(414);
      expect(line.body).toEqual(openAi('uri_too_long'));
      const model = await sendRaw(
        ports[role]!,
        `GET /v1/models/${'m'.repeat(300)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(model.status).toBe(414);
      expect(model.body).toEqual(openAi('uri_too_long'));
      expect(model.headers['x-request-id']).toEqual(expect.any(String));
    });

    it('400 in OpenAI’s shape for a path that does not decode', async () => {
      const answer = await sendRaw(
        ports[role]!,
        'GET /v1/models/%E0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(openAi('invalid_url'));
    });

    it('still answers ordinary requests afterwards', async () => {
      const answer = await sendRaw(
        ports[role]!,
        'GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: { message: expect.any(String) } });
    });
  });
});

/**
 * The relay behind its front door over a real socket, in both process roles: a relay-only app, and the console
 * API with the relay beside it (ROLE=all). Calls the door takes and calls it leaves to Fastify answer alike.
 */
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { buildApp } from '@turnpike/api';
import { logs, users } from '@turnpike/core/db/schema/index';
import { registerRelay } from '@turnpike/relay';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp, seedFakeModels } from '../testing/all-test-app.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let all: FastifyInstance;

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  await seedFakeModels(t, fake.url);
  await t.startRelay();
  await t.relay.listen({ port: 0, host: '127.0.0.1' });
  all = await buildApp(t.runtime.deps);
  await registerRelay(all, t.runtime.deps, { flushIntervalMs: 20 });
  await all.listen({ port: 0, host: '127.0.0.1' });
});

it('keeps the console API same-origin when the relay shares its process (ROLE=all)', async () => {
  const response = await fetch(urlOf(all, '/api/status'), {
    headers: { origin: 'https://elsewhere.example' },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('access-control-allow-origin')).toBeNull();
});

afterAll(async () => {
  await all?.close();
  await t?.close();
  await fake?.close();
});

const urlOf = (app: FastifyInstance, path: string) =>
  `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${path}`;

const logCountOf = async (userId: number) =>
  (await t.runtime.deps.db.select({ id: logs.id }).from(logs).where(eq(logs.userId, userId))).length;
const quotaOf = async (userId: number) =>
  (await t.runtime.deps.db.select({ quota: users.quota }).from(users).where(eq(users.id, userId)))[0]!.quota;

/** A new caller with 1,000,000 quota, and POSTs of theirs to `app` over a real socket. */
async function newCaller() {
  const user = await t.seedUser({ quota: 1_000_000 });
  const token = await t.seedToken(user.id);
  const post = (
    app: FastifyInstance,
    path: string,
    body: string | Uint8Array,
    headers: Record<string, string> = {},
  ) =>
    fetch(urlOf(app, path), {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json', ...headers },
      body: body as BodyInit,
    });
  const chat = (app: FastifyInstance, body: string, headers: Record<string, string> = {}) =>
    post(app, '/v1/chat/completions', body, headers);
  return { user, chat, post };
}

describe.each([
  ['a relay-only process', () => t.relay],
  ['ROLE=all', () => all],
])('the relay behind its front door, %s', (_name, appOf) => {
  it('relays and bills a chat call, with the request id and the charge in the headers', async () => {
    const { user, chat } = await newCaller();
    const response = await chat(
      appOf(),
      JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }),
      { 'x-request-id': 'door-call-1' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('door-call-1');
    const body = (await response.json()) as { object: string; usage: { total_tokens: number } };
    expect(body.object).toBe('chat.completion');
    const charged = Number(response.headers.get('x-turnpike-quota'));
    expect(charged).toBeGreaterThan(0);
    await expect.poll(() => quotaOf(user.id), { timeout: 5000 }).toBe(1_000_000 - charged);
  });

  it('streams a chat call to its end', async () => {
    const { chat } = await newCaller();
    const response = await chat(
      appOf(),
      JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'hello there' }],
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    expect(text).toMatch(/: x-turnpike-quota: [1-9]\d*\n\ndata: \[DONE\]\n\n$/);
  });

  it('answers browsers of any origin on the model routes, through the door and through Fastify alike', async () => {
    const { chat } = await newCaller();
    const origin = 'https://chat.example.org';
    const preflight = await fetch(urlOf(appOf(), '/v1/chat/completions'), {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type');

    const body = (stream: boolean) =>
      JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] });
    for (const stream of [false, true]) {
      const response = await chat(appOf(), body(stream), { origin });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('access-control-expose-headers')).toContain('x-turnpike-quota');
      expect(response.headers.get('vary')).toContain('Origin');
      await response.text();
    }
    const refused = await chat(appOf(), '{"model":', { origin });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe(origin);
    const models = await fetch(urlOf(appOf(), '/v1/models'), { headers: { origin } });
    expect(models.headers.get('access-control-allow-origin')).toBe(origin);
    // Without an Origin (a server-side client) nothing is added.
    const plain = await chat(appOf(), body(false));
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reads compressed bodies, through the door and through Fastify alike, and refuses what it cannot decode', async () => {
    const { user, post } = await newCaller();
    const chatBody = JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    const gzipped = await post(appOf(), '/v1/chat/completions', gzipSync(chatBody), {
      'content-encoding': 'gzip',
    });
    expect(gzipped.status).toBe(200);
    expect(((await gzipped.json()) as { object: string }).object).toBe('chat.completion');
    const brotli = await post(appOf(), '/v1/chat/completions', brotliCompressSync(chatBody), {
      'content-encoding': 'br',
    });
    expect(brotli.status).toBe(200);
    await brotli.text();
    // A path with a parameter is Fastify's.
    const embedding = await post(
      appOf(),
      '/v1/engines/text-embedding-3-small/embeddings',
      gzipSync(JSON.stringify({ input: 'hello' })),
      { 'content-encoding': 'gzip' },
    );
    expect(embedding.status).toBe(200);
    expect(((await embedding.json()) as { object: string }).object).toBe('list');

    // The three calls above are billed once their logs are written (the balance moves with them).
    await expect.poll(() => logCountOf(user.id)).toBe(3);
    const charged = await quotaOf(user.id);
    for (const path of ['/v1/chat/completions', '/v1/engines/text-embedding-3-small/embeddings']) {
      const broken = await post(appOf(), path, 'not gzip at all', { 'content-encoding': 'gzip' });
      expect(broken.status, path).toBe(400);
      expect(((await broken.json()) as { error: { message: string } }).error.message).toContain(
        'decompressed',
      );
      const unknown = await post(appOf(), path, chatBody, { 'content-encoding': 'zstd-9000' });
      expect(unknown.status, path).toBe(415);
      expect(((await unknown.json()) as { error: { type: string } }).error.type).toBe(
        'invalid_request_error',
      );
    }
    // A small body that inflates past the body limit (40 MB of spaces, about 40 KB gzipped) is refused on both paths.
    const expanding = gzipSync(JSON.stringify({ model: 'gpt-4o-mini', input: ' '.repeat(40 * 1024 * 1024) }));
    for (const path of ['/v1/chat/completions', '/v1/engines/text-embedding-3-small/embeddings']) {
      const refused = await post(appOf(), path, expanding, { 'content-encoding': 'gzip' });
      expect(refused.status, path).toBe(413);
    }
    expect(await quotaOf(user.id)).toBe(charged);
  });

  it('leaves a body that is not JSON to Fastify and the pipeline, which refuse it in OpenAI shape', async () => {
    const { user, chat } = await newCaller();
    const response = await chat(appOf(), 'hello', { 'content-type': 'text/plain' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(await quotaOf(user.id)).toBe(1_000_000);
  });
});

/**
 * The relay behind its front door over a real socket, in both process roles: a relay-only app, and the console
 * API with the relay beside it (ROLE=all). Calls the door takes and calls it leaves to Fastify answer alike.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '@turnpike/api/app';
import { users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRelay } from './app.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let all: FastifyInstance;

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.startRelay();
  await t.relay.listen({ port: 0, host: '127.0.0.1' });
  all = await buildApp(t.runtime.deps);
  await registerRelay(all, t.runtime.deps, { flushIntervalMs: 20, channelDebounceMs: 10 });
  await all.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await all?.close();
  await t?.close();
  await fake?.close();
});

const urlOf = (app: FastifyInstance, path: string) =>
  `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${path}`;

const quotaOf = async (userId: number) =>
  (await t.runtime.deps.db.select({ quota: users.quota }).from(users).where(eq(users.id, userId)))[0]!.quota;

describe.each([
  ['a relay-only process', () => t.relay],
  ['ROLE=all', () => all],
])('the relay behind its front door, %s', (_name, appOf) => {
  it('relays and bills a chat call, with the request id and the charge in the headers', async () => {
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id);
    const response = await fetch(urlOf(appOf(), '/v1/chat/completions'), {
      method: 'POST',
      headers: {
        authorization: `Bearer sk-${token.key}`,
        'content-type': 'application/json',
        'x-request-id': 'door-call-1',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('door-call-1');
    const body = (await response.json()) as { object: string; usage: { total_tokens: number } };
    expect(body.object).toBe('chat.completion');
    const charged = Number(response.headers.get('x-turnpike-quota'));
    expect(charged).toBeGreaterThan(0);
    await expect.poll(() => quotaOf(user.id), { timeout: 5000 }).toBe(1_000_000 - charged);
  });

  it('streams a chat call to its end', async () => {
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id);
    const response = await fetch(urlOf(appOf(), '/v1/chat/completions'), {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'hello there' }],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    expect(text).toMatch(/: x-turnpike-quota: [1-9]\d*\n\ndata: \[DONE\]\n\n$/);
  });

  it('leaves a body that is not JSON to Fastify and the pipeline, which refuse it in OpenAI shape', async () => {
    const user = await t.seedUser({ quota: 1_000_000 });
    const token = await t.seedToken(user.id);
    const response = await fetch(urlOf(appOf(), '/v1/chat/completions'), {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(await quotaOf(user.id)).toBe(1_000_000);
  });
});

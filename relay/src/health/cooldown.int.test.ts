import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';

/**
 * Cool-down through the whole relay: a channel answering 5xx rests after ChannelCooldownFailures failures, its
 * traffic goes to the other channel, and it is picked again when ChannelCooldownMinutes are over (the clock is
 * moved forward through `Date.now`, which is what the cool-down reads).
 */

let t: RelayTestApp;
let broken: FakeOpenAi;
let healthy: FakeOpenAi;
let fussy: { server: Server; url: string; requests: number };
let auth: Record<string, string>;

/** An OpenAI-compatible upstream that refuses every request as too long (a 400 about the request itself). */
async function startFussyUpstream() {
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.requests += 1;
      const body = JSON.stringify({
        error: {
          message: "This model's maximum context length is 128000 tokens.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      });
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
  };
}

const chat = (model: string, body: Record<string, unknown> = {}) =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: auth,
    payload: { model, messages: [{ role: 'user', content: 'hello' }], ...body },
  });

const chatRequestsOf = (fake: FakeOpenAi) =>
  fake.requests.filter((r) => r.path === '/v1/chat/completions').length;

/** Moves `Date.now` forward by `ms` from now on. */
function advanceClock(ms: number) {
  const realNow = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
}

beforeAll(async () => {
  broken = await startFakeOpenAi({ error: 500 });
  healthy = await startFakeOpenAi();
  fussy = await startFussyUpstream();
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.setMany([
    ['ModelRatio', JSON.stringify({ 'cool-model': 1, 'lonely-model': 1, 'fussy-model': 1 })],
    ['RetryTimes', '1'],
    ['ChannelCooldownEnabled', 'true'],
    ['ChannelCooldownFailures', '2'],
    ['ChannelCooldownWindowSeconds', '60'],
    ['ChannelCooldownMinutes', '1'],
  ]);
  // cool-model: the broken channel is preferred (higher priority); the healthy one catches the retries.
  await t.seedChannel({ key: 'sk-a', baseUrl: broken.url, models: 'cool-model,lonely-model', priority: 10 });
  await t.seedChannel({ key: 'sk-b', baseUrl: healthy.url, models: 'cool-model', priority: 0 });
  await t.seedChannel({ key: 'sk-c', baseUrl: fussy.url, models: 'fussy-model', priority: 10 });
  await t.seedChannel({ key: 'sk-d', baseUrl: healthy.url, models: 'fussy-model', priority: 0 });
  const user = await t.seedUser();
  const token = await t.seedToken(user.id);
  auth = { authorization: `Bearer sk-${token.key}` };
  await t.startRelay();
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await t?.close();
  await broken?.close();
  await healthy?.close();
  await new Promise((resolve) => fussy?.server.close(resolve));
});

describe('channel cool-down', () => {
  it('rests a failing channel after two 5xx, sends its traffic to the other one, and picks it again later', async () => {
    for (let i = 0; i < 2; i += 1) {
      const response = await chat('cool-model');
      expect(response.statusCode, response.body).toBe(200); // the retry on the healthy channel answered
    }
    expect(chatRequestsOf(broken)).toBe(2);
    const healthyBefore = chatRequestsOf(healthy);

    for (let i = 0; i < 4; i += 1) expect((await chat('cool-model')).statusCode).toBe(200);
    expect(chatRequestsOf(broken)).toBe(2); // resting: never asked
    expect(chatRequestsOf(healthy)).toBe(healthyBefore + 4);

    advanceClock(61_000);
    expect((await chat('cool-model')).statusCode).toBe(200);
    expect(chatRequestsOf(broken)).toBe(3); // back in the rotation
  });

  it('answers "no channel available" at once when every channel of the model rests', async () => {
    advanceClock(10 * 60_000); // past any rest of the previous test
    const first = await chat('lonely-model');
    expect(first.statusCode).toBe(500);
    await chat('lonely-model');
    const before = chatRequestsOf(broken);

    const startedAt = performance.now();
    const response = await chat('lonely-model');
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(response.statusCode).toBe(503);
    expect(response.json().error.message).toMatch(/no channel is available for model lonely-model/);
    expect(chatRequestsOf(broken)).toBe(before);
  });

  it('does not count 4xx answers about the request, nor errors the gateway raised itself', async () => {
    for (let i = 0; i < 4; i += 1) {
      const response = await chat('fussy-model');
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('context_length_exceeded');
    }
    for (let i = 0; i < 4; i += 1) {
      const refused = await t.relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: auth,
        payload: { model: 'fussy-model' }, // no messages: refused by the gateway
      });
      expect(refused.statusCode).toBe(400);
    }
    // Still the first choice: every request reached the preferred channel.
    const before = fussy.requests;
    expect((await chat('fussy-model')).statusCode).toBe(400);
    expect(fussy.requests).toBe(before + 1);
    expect(before).toBe(4);
  });
});

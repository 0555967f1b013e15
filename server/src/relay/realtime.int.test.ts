/**
 * `/v1/realtime` over WebSocket (issue 31, docs/adr/0032): the official `openai` SDK's realtime clients (beta and
 * GA, over TLS as the SDK insists on `wss:`) and a browser-style client (the key in a subprotocol), through a
 * listening relay to a fake upstream that speaks OpenAI's and Azure's realtime protocol and checks their
 * credentials. Checked as an operator would: each response is one consume log whose quota is OpenAI's published
 * price for its tokens (written below with its page, at the documented 1 USD = 500 000 quota units), the balance drops by exactly the logged sum, a response the balance cannot cover is never sent upstream,
 * and a draining relay closes its sessions with 1001.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { channels, logs, tokens, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { startHttpProxy, startSocks5Proxy } from '@turnpike/core/testing/fake-proxies';
import { buildRelayApp } from '@turnpike/relay';
import { RESPONSE_OUTPUT_CAP } from '@turnpike/relay/realtime/events';
import { type FakeRealtime, startFakeRealtime } from '@turnpike/relay/testing/fake-realtime';
import { waitFor } from '@turnpike/relay/testing/wait';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { setupRoot } from '../testing/test-app.ts';

/**
 * The dated snapshot: the product's built-in audio ratio of the undated name is the 2024-10-01 price ($100 / $200
 * per 1M audio tokens), not the published $40 / $80 (reported to issue 39, which owns prices).
 */
const MODEL = 'gpt-4o-realtime-preview-2024-12-17';
const AZURE_MODEL = 'gpt-4o-mini-realtime-preview';

/** Quota units per US dollar (the documented `QuotaPerUnit`, 500 000). */
const QUOTA_PER_USD = 500_000;

/**
 * OpenAI's published prices, USD per 1M tokens:
 * - gpt-4o-realtime-preview and its 2024-12-17 snapshot: https://developers.openai.com/api/docs/models/gpt-4o-realtime-preview
 *   (text $5 in, $20 out; audio $40 in, $80 out).
 * - gpt-4o-mini-realtime-preview: https://developers.openai.com/api/docs/models/gpt-4o-mini-realtime-preview (text
 *   $0.60 in, $2.40 out; audio $10 in, $20 out).
 */
const PRICES = {
  [MODEL]: { textIn: 5, textOut: 20, audioIn: 40, audioOut: 80 },
  [AZURE_MODEL]: { textIn: 0.6, textOut: 2.4, audioIn: 10, audioOut: 20 },
} as const;
/** The text prices as the test sets them: a model ratio is the input price in units of $2 per 1M tokens. */
const MODEL_RATIO = PRICES[MODEL].textIn / 2;
const AZURE_RATIO = PRICES[AZURE_MODEL].textIn / 2;
const COMPLETION_RATIOS = {
  [MODEL]: PRICES[MODEL].textOut / PRICES[MODEL].textIn,
  [AZURE_MODEL]: PRICES[AZURE_MODEL].textOut / PRICES[AZURE_MODEL].textIn,
};

let t: RelayTestApp;
let fake: FakeRealtime;
let relayUrl: string;
let tlsPort: number;
let tlsServer: NetServer;
let certificate: string;

const db = () => t.runtime.deps.db;
/** Whether the relay lists `model` to a caller (it has learned of the channel that serves it). */
const listed = async (key: string, model: string) => {
  const answer = await t.relay.inject({
    method: 'GET',
    url: '/v1/models',
    headers: { authorization: `Bearer ${key}` },
  });
  return (answer.json() as { data: { id: string }[] }).data.some((entry) => entry.id === model);
};
const quotaOf = async (userId: number) =>
  (await db().select({ quota: users.quota }).from(users).where(eq(users.id, userId)))[0]!.quota;
const consumeLogs = (userId: number) =>
  db()
    .select()
    .from(logs)
    .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));

interface RealtimeUsage {
  input_tokens: number;
  output_tokens: number;
  input_token_details: { text_tokens: number; audio_tokens: number; cached_tokens: number };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

/** The charge at the published price: each kind of token at its price, in quota units. */
const bill = (u: RealtimeUsage, model: keyof typeof PRICES) => {
  const price = PRICES[model];
  const dollars =
    (u.input_token_details.text_tokens * price.textIn +
      u.input_token_details.audio_tokens * price.audioIn +
      u.output_token_details.text_tokens * price.textOut +
      u.output_token_details.audio_tokens * price.audioOut) /
    1_000_000;
  return Math.round(dollars * QUOTA_PER_USD);
};

async function newCaller(quota: number): Promise<{ userId: number; key: string }> {
  const user = await t.seedUser({ quota });
  const token = await t.seedToken(user.id);
  return { userId: user.id, key: `sk-${token.key}` };
}

/** A WebSocket client that records every event and can wait for one. */
function recorder(socket: WebSocket) {
  const events: Record<string, unknown>[] = [];
  socket.on('message', (data) => events.push(JSON.parse(data.toString()) as Record<string, unknown>));
  return {
    events,
    next: (type: string, after = 0) =>
      waitFor(() => events.slice(after).find((event) => event.type === type), 10_000),
    count: (type: string) => events.filter((event) => event.type === type).length,
  };
}

const opened = (socket: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });

/** The HTTP status a refused upgrade answered, and its body. */
const refusal = (url: string, options: WebSocket.ClientOptions & { protocols?: string[] } = {}) =>
  new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const socket = new WebSocket(url, options.protocols ?? [], options);
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    socket.once('error', () => {});
  });

beforeAll(async () => {
  fake = await startFakeRealtime({ openAiKey: 'sk-upstream-rt', azureKey: 'azure-rt-key' });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({ [MODEL]: MODEL_RATIO, [AZURE_MODEL]: AZURE_RATIO }),
  );
  await t.runtime.deps.options.set('CompletionRatio', JSON.stringify(COMPLETION_RATIOS));
  await t.seedChannel({ key: 'sk-upstream-rt', baseUrl: fake.url, models: MODEL, name: 'openai realtime' });
  await t.seedChannel({
    type: 3,
    key: 'azure-rt-key',
    baseUrl: fake.url,
    models: AZURE_MODEL,
    name: 'azure realtime',
    other: '2025-04-01-preview',
  });
  const relay = await t.startRelay();
  const address = await relay.listen({ port: 0, host: '127.0.0.1' });
  relayUrl = address.replace(/^http/, 'ws');
  const relayPort = Number(new URL(address).port);

  // The SDK opens only wss: URLs; a TLS terminator in front of the relay stands in for the ingress.
  const dir = mkdtempSync(path.join(tmpdir(), 'turnpike-rt-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  certificate = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  tlsServer = createTlsServer(
    { key: readFileSync(path.join(dir, 'key.pem')), cert: certificate },
    (secure) => {
      const plain = connect(relayPort, '127.0.0.1');
      secure.pipe(plain).pipe(secure);
      secure.on('error', () => plain.destroy());
      plain.on('error', () => secure.destroy());
    },
  );
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  const tlsAddress = tlsServer.address();
  tlsPort = typeof tlsAddress === 'object' && tlsAddress ? tlsAddress.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => tlsServer?.close(() => resolve()));
  await t?.close();
  await fake?.close();
});

describe('realtime sessions through the relay', () => {
  it("the SDK's beta client talks to an OpenAI channel: the channel's key upstream, each response billed at audio prices", async () => {
    const caller = await newCaller(2_000_000);
    const { OpenAIRealtimeWS } = await import('openai/beta/realtime/ws');
    const client = new OpenAI({
      apiKey: caller.key,
      baseURL: `https://127.0.0.1:${tlsPort}/v1`,
      maxRetries: 0,
    });
    const rt = new OpenAIRealtimeWS({ model: MODEL, options: { ca: certificate } }, client);
    const events: { type: string; [key: string]: unknown }[] = [];
    rt.on('event', (event) => events.push(event as { type: string }));
    const failures: unknown[] = [];
    rt.on('error', (error) => failures.push(error));
    await waitFor(() => events.find((event) => event.type === 'session.created'));
    const turn = async (text: string) => {
      const before = events.filter((event) => event.type === 'response.done').length;
      rt.send({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      });
      rt.send({ type: 'response.create' });
      await waitFor(() => events.filter((event) => event.type === 'response.done')[before]);
    };
    await turn('Hello, tell me about the weather today.');
    await turn('And tomorrow?');
    expect(events.filter((event) => event.type === 'response.audio.delta').length).toBe(8);
    rt.close();
    expect(failures).toEqual([]);

    const upstream = fake.sessions.at(-1)!;
    expect(upstream.headers.authorization).toBe('Bearer sk-upstream-rt');
    expect(upstream.headers['openai-beta']).toBe('realtime=v1');
    expect(upstream.url).toBe(`/v1/realtime?model=${MODEL}`);
    // Every response the upstream was asked for carried the output limit the relay held it at.
    const asked = upstream.received.filter((event) => event.type === 'response.create');
    expect(asked.map((event) => (event.response as { max_output_tokens: number }).max_output_tokens)).toEqual(
      [RESPONSE_OUTPUT_CAP, RESPONSE_OUTPUT_CAP],
    );

    const done = events.filter((event) => event.type === 'response.done') as unknown as {
      response: { id: string; usage: RealtimeUsage };
    }[];
    const expected = done.map((event) => bill(event.response.usage, MODEL));
    const rows = await waitFor(async () => {
      const found = await consumeLogs(caller.userId);
      return found.length === 2 ? found : undefined;
    });
    expect(rows.map((row) => row.quota).sort()).toEqual([...expected].sort());
    for (const row of rows) {
      expect(row.modelName).toBe(MODEL);
      expect(row.isStream).toBe(true);
      expect(JSON.parse(row.other ?? '{}')).toMatchObject({ realtime: true, audio: true });
    }
    // logs = deductions: the balance dropped by exactly what the logs say.
    const charged = expected.reduce((sum, quota) => sum + quota, 0);
    await waitFor(async () => ((await quotaOf(caller.userId)) === 2_000_000 - charged ? true : undefined));
  });

  it("the SDK's GA client opens a session, and the GA event names pass through", async () => {
    const caller = await newCaller(2_000_000);
    const { OpenAIRealtimeWS } = await import('openai/realtime/ws');
    const client = new OpenAI({
      apiKey: caller.key,
      baseURL: `https://127.0.0.1:${tlsPort}/v1`,
      maxRetries: 0,
    });
    const rt = await OpenAIRealtimeWS.create(client, { model: MODEL, options: { ca: certificate } });
    const events: { type: string }[] = [];
    rt.on('event', (event) => events.push(event as { type: string }));
    await waitFor(() => events.find((event) => event.type === 'session.created'));
    rt.send({ type: 'response.create' });
    await waitFor(() => events.find((event) => event.type === 'response.done'));
    expect(events.some((event) => event.type === 'response.output_audio.delta')).toBe(true);
    rt.close();
    expect(fake.sessions.at(-1)!.headers['openai-beta']).toBeUndefined();
    await waitFor(async () => ((await consumeLogs(caller.userId)).length === 1 ? true : undefined));
  });

  it('a browser-style client (key in the subprotocol) reaches an Azure channel by deployment and api-key', async () => {
    const caller = await newCaller(1_000_000);
    const socket = new WebSocket(`${relayUrl}/v1/realtime?model=${AZURE_MODEL}`, [
      'realtime',
      `openai-insecure-api-key.${caller.key}`,
    ]);
    const client = recorder(socket);
    await opened(socket);
    // The key's own subprotocol is never echoed back.
    expect(socket.protocol).toBe('realtime');
    await client.next('session.created');
    socket.send(JSON.stringify({ type: 'response.create', response: { max_output_tokens: 2 } }));
    const done = (await client.next('response.done')) as { response: { usage: RealtimeUsage } };
    socket.close();
    const upstream = fake.sessions.at(-1)!;
    expect(upstream.headers['api-key']).toBe('azure-rt-key');
    expect(upstream.headers.authorization).toBeUndefined();
    const url = new URL(upstream.url, 'http://x');
    expect(url.pathname).toBe('/openai/realtime');
    expect(url.searchParams.get('deployment')).toBe('gpt-4o-mini-realtime-preview');
    expect(url.searchParams.get('api-version')).toBe('2025-04-01-preview');
    // The client's lower limit is kept.
    const asked = upstream.received.find((event) => event.type === 'response.create') as {
      response: { max_output_tokens: number };
    };
    expect(asked.response.max_output_tokens).toBe(2);
    expect(done.response.usage.output_token_details.audio_tokens).toBe(2);
    const rows = await waitFor(async () => {
      const found = await consumeLogs(caller.userId);
      return found.length === 1 ? found : undefined;
    });
    expect(rows[0]!.quota).toBe(bill(done.response.usage, AZURE_MODEL));
  });

  it('refuses before the upgrade, in OpenAI error shape: no key, a bad key, no model, an unknown model, too little quota', async () => {
    const caller = await newCaller(1_000_000);
    const poor = await newCaller(10);
    const url = `${relayUrl}/v1/realtime?model=${MODEL}`;
    const none = await refusal(url);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: { code: 'invalid_api_key' } });
    const bad = await refusal(url, { headers: { authorization: 'Bearer sk-not-a-token' } });
    expect(bad.status).toBe(401);
    const noModel = await refusal(`${relayUrl}/v1/realtime`, {
      headers: { authorization: `Bearer ${caller.key}` },
    });
    expect(noModel.status).toBe(400);
    expect(noModel.body).toMatchObject({ error: { code: 'missing_model' } });
    const unknown = await refusal(`${relayUrl}/v1/realtime?model=gpt-nothing`, {
      headers: { authorization: `Bearer ${caller.key}` },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'model_not_found' } });
    const broke = await refusal(url, { headers: { authorization: `Bearer ${poor.key}` } });
    expect(broke.status).toBe(403);
    expect(broke.body).toMatchObject({ error: { code: 'insufficient_user_quota' } });
    const otherPath = await refusal(`${relayUrl}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${caller.key}` },
    });
    expect(otherPath.status).toBe(404);
    expect(await consumeLogs(poor.userId)).toEqual([]);
    expect(await quotaOf(poor.userId)).toBe(10);
  });

  it('a response the balance cannot cover is refused inside the session and never sent upstream; served <= balance', async () => {
    const start = 20_000;
    const caller = await newCaller(start);
    const socket = new WebSocket(`${relayUrl}/v1/realtime?model=${MODEL}`, {
      headers: { authorization: `Bearer ${caller.key}`, 'openai-beta': 'realtime=v1' },
    });
    const client = recorder(socket);
    await opened(socket);
    await client.next('session.created');
    socket.send(JSON.stringify({ type: 'session.update', session: { max_response_output_tokens: 100 } }));
    await client.next('session.updated');
    socket.send(JSON.stringify({ type: 'response.create', event_id: 'first' }));
    const first = (await client.next('response.done')) as { response: { usage: RealtimeUsage } };
    // A long input makes the next response's hold larger than what is left.
    socket.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(30_000) }] },
      }),
    );
    socket.send(JSON.stringify({ type: 'response.create', event_id: 'second' }));
    const refused = (await client.next('error')) as { error: { code: string; event_id: string } };
    expect(refused.error).toMatchObject({ code: 'insufficient_quota', event_id: 'second' });
    socket.close();
    const upstream = fake.sessions.at(-1)!;
    expect(
      upstream.received.filter((event) => event.type === 'response.create').map((event) => event.event_id),
    ).toEqual(['first']);
    // The session's own limit was capped too (server-started responses are held at it).
    expect(
      upstream.received
        .filter((event) => event.type === 'session.update')
        .map((event) => (event.session as { max_response_output_tokens: number }).max_response_output_tokens),
    ).toEqual([RESPONSE_OUTPUT_CAP, 100]);
    const charged = bill(first.response.usage, MODEL);
    const rows = await waitFor(async () => {
      const found = await consumeLogs(caller.userId);
      return found.length === 1 ? found : undefined;
    });
    expect(rows[0]!.quota).toBe(charged);
    await waitFor(async () => ((await quotaOf(caller.userId)) === start - charged ? true : undefined));
  });

  it('a response the upstream starts on its own (voice activity) is held and billed like any other', async () => {
    const caller = await newCaller(1_000_000);
    const socket = new WebSocket(`${relayUrl}/v1/realtime?model=${MODEL}`, {
      headers: { authorization: `Bearer ${caller.key}` },
    });
    const client = recorder(socket);
    await opened(socket);
    await client.next('session.created');
    await client.next('session.updated');
    fake.startResponse();
    const done = (await client.next('response.done')) as { response: { usage: RealtimeUsage } };
    socket.close();
    const rows = await waitFor(async () => {
      const found = await consumeLogs(caller.userId);
      return found.length === 1 ? found : undefined;
    });
    expect(rows[0]!.quota).toBe(bill(done.response.usage, MODEL));
    await waitFor(async () =>
      (await quotaOf(caller.userId)) === 1_000_000 - rows[0]!.quota ? true : undefined,
    );
  });
});

describe('the limits a realtime session counts against', () => {
  /** A caller whose token has the given limits. */
  async function limitedCaller(limits: { concurrencyLimit?: number; tpmLimit?: number }) {
    const user = await t.seedUser({ quota: 5_000_000 });
    const token = await t.seedToken(user.id);
    await db().update(tokens).set(limits).where(eq(tokens.id, token.id));
    return { userId: user.id, key: `sk-${token.key}` };
  }
  const open = async (key: string) => {
    const socket = new WebSocket(`${relayUrl}/v1/realtime?model=${MODEL}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const client = recorder(socket);
    await opened(socket);
    await client.next('session.created');
    return { socket, client };
  };

  it("a token's concurrency: a session holds a slot while it lasts; one more is a 429 with the limit headers", async () => {
    const caller = await limitedCaller({ concurrencyLimit: 1 });
    const first = await open(caller.key);
    const refused = await new Promise<{ status: number; headers: Record<string, unknown> }>(
      (resolve, reject) => {
        const socket = new WebSocket(`${relayUrl}/v1/realtime?model=${MODEL}`, {
          headers: { authorization: `Bearer ${caller.key}` },
        });
        socket.once('open', () => reject(new Error('a second session was admitted')));
        socket.once('unexpected-response', (_request, response) => {
          response.resume();
          resolve({ status: response.statusCode ?? 0, headers: response.headers });
        });
        socket.once('error', () => {});
      },
    );
    expect(refused.status).toBe(429);
    expect(refused.headers['x-ratelimit-limit-concurrency']).toBe('1');
    expect(refused.headers['retry-after']).toBeDefined();
    const closed = new Promise((resolve) => first.socket.once('close', resolve));
    first.socket.close();
    await closed;
    // The slot comes back when the session ends.
    const again = await waitFor(async () => {
      const attempt = new WebSocket(`${relayUrl}/v1/realtime?model=${MODEL}`, {
        headers: { authorization: `Bearer ${caller.key}` },
      });
      return new Promise<WebSocket | undefined>((resolve) => {
        attempt.once('open', () => resolve(attempt));
        attempt.once('unexpected-response', (_request, response) => {
          response.resume();
          resolve(undefined);
        });
        attempt.once('error', () => resolve(undefined));
      });
    });
    again.close();
  });

  it("a token's tokens per minute: each response is admitted at its estimate and corrected to its usage", async () => {
    const caller = await limitedCaller({ tpmLimit: 3_000 });
    const { socket, client } = await open(caller.key);
    // Two responses of at most 2,000 tokens each fit in 3,000 only because the first is corrected to its usage.
    for (const eventId of ['one', 'two']) {
      const before = client.count('response.done');
      socket.send(
        JSON.stringify({
          type: 'response.create',
          event_id: eventId,
          response: { max_output_tokens: 2_000 },
        }),
      );
      await waitFor(() => (client.count('response.done') > before ? true : undefined));
      // Settled (and so corrected) before the next one is asked for.
      await waitFor(async () => ((await consumeLogs(caller.userId)).length > before ? true : undefined));
    }
    // One that could need more than the whole minute's allowance is refused inside the session, not sent upstream.
    socket.send(JSON.stringify({ type: 'response.create', event_id: 'big' }));
    const refused = (await client.next('error')) as {
      error: { code: string; event_id: string; message: string };
    };
    expect(refused.error).toMatchObject({ code: 'rate_limit_exceeded', event_id: 'big' });
    expect(refused.error.message).toMatch(/tokens per minute/);
    socket.close();
    const upstream = fake.sessions.at(-1)!;
    expect(
      upstream.received.filter((event) => event.type === 'response.create').map((event) => event.event_id),
    ).toEqual(['one', 'two']);
    await waitFor(async () => ((await consumeLogs(caller.userId)).length === 2 ? true : undefined));
  });
});

describe('a multi-key realtime channel', () => {
  it('a key the upstream refuses is disabled on its own and the session opens with another key of the channel', async () => {
    const root = await setupRoot(t.app);
    await t.runtime.deps.options.set('AutomaticDisableChannelEnabled', 'true');
    await t.runtime.deps.options.set('RetryTimes', '2');
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify({ [MODEL]: MODEL_RATIO, [AZURE_MODEL]: AZURE_RATIO, 'rt-pool': MODEL_RATIO }),
    );
    const created = await root.post('/api/channel/', {
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
      channel: {
        name: 'rt pool',
        type: 1,
        key: 'sk-dead-rt-key\nsk-upstream-rt',
        base_url: fake.url,
        models: 'rt-pool',
      },
    });
    expect(created.json()).toMatchObject({ success: true });
    const id = (created.json().data as { id: number }[])[0]!.id;
    const caller = await newCaller(5_000_000);
    const sessions = fake.sessions.length;
    // The relay learns of the new channel from the change event.
    await waitFor(async () => ((await listed(caller.key, 'rt-pool')) ? true : undefined));
    for (let i = 0; i < 2; i += 1) {
      const socket = new WebSocket(`${relayUrl}/v1/realtime?model=rt-pool`, {
        headers: { authorization: `Bearer ${caller.key}` },
      });
      const client = recorder(socket);
      await opened(socket);
      await client.next('session.created');
      socket.close();
    }
    // Every session the upstream accepted came with the good key; the dead one was tried at most once.
    expect(fake.sessions.slice(sessions).map((session) => session.headers.authorization)).toEqual([
      'Bearer sk-upstream-rt',
      'Bearer sk-upstream-rt',
    ]);
    const info = await waitFor(async () => {
      const [row] = await db().select().from(channels).where(eq(channels.id, id));
      const parsed = JSON.parse(row?.channelInfo ?? '{}') as {
        multi_key_status_list?: Record<string, number>;
      };
      return parsed.multi_key_status_list?.['0'] === 3 ? { parsed, status: row!.status } : undefined;
    });
    expect(info.parsed.multi_key_status_list?.['1']).toBeUndefined();
    expect(info.status).toBe(1);
  });
});

describe("a channel's outbound proxy", () => {
  it('carries the upstream session through the HTTP proxy and the SOCKS5 proxy the channel names', async () => {
    const http = await startHttpProxy({ username: 'rt', password: 'proxy-secret' });
    const socks = await startSocks5Proxy({ username: 'rt', password: 'proxy-secret' });
    try {
      const withCredentials = (url: string) => url.replace('://', '://rt:proxy-secret@');
      await t.runtime.deps.options.set(
        'ModelRatio',
        JSON.stringify({
          [MODEL]: MODEL_RATIO,
          [AZURE_MODEL]: AZURE_RATIO,
          'rt-via-http': 1,
          'rt-via-socks': 1,
        }),
      );
      await t.seedChannel({
        key: 'sk-upstream-rt',
        baseUrl: fake.url,
        models: 'rt-via-http',
        setting: { proxy: withCredentials(http.url) },
      });
      await t.seedChannel({
        key: 'sk-upstream-rt',
        baseUrl: fake.url,
        models: 'rt-via-socks',
        setting: { proxy: withCredentials(socks.url) },
      });
      const deps = t.runtime.deps;
      const relay = await buildRelayApp(deps);
      const address = await relay.listen({ port: 0, host: '127.0.0.1' });
      try {
        const caller = await newCaller(1_000_000);
        for (const model of ['rt-via-http', 'rt-via-socks']) {
          const socket = new WebSocket(`${address.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, {
            headers: { authorization: `Bearer ${caller.key}` },
          });
          const client = recorder(socket);
          await opened(socket);
          await client.next('session.created');
          socket.close();
        }
      } finally {
        await relay.close();
      }
      const upstream = new URL(fake.url).host;
      expect(http.targets).toEqual([upstream]);
      expect(socks.targets).toEqual([upstream]);
    } finally {
      await http.close();
      await socks.close();
    }
  });
});

describe('a draining relay', () => {
  let slow: FakeRealtime;
  let draining: FastifyInstance;

  beforeAll(async () => {
    slow = await startFakeRealtime({ openAiKey: 'sk-upstream-rt', audioDeltas: 200, deltaIntervalMs: 20 });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('closes open sessions with 1001 and bills what a cut response produced, counted from its deltas', async () => {
    const caller = await newCaller(2_000_000);
    await t.seedChannel({
      key: 'sk-upstream-rt',
      baseUrl: slow.url,
      models: 'gpt-4o-realtime-slow',
      name: 'slow',
    });
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify({
        [MODEL]: MODEL_RATIO,
        [AZURE_MODEL]: AZURE_RATIO,
        'gpt-4o-realtime-slow': MODEL_RATIO,
      }),
    );
    const deps = t.runtime.deps;
    draining = await buildRelayApp({ ...deps, config: { ...deps.config, shutdownGraceSeconds: 1 } });
    const address = await draining.listen({ port: 0, host: '127.0.0.1' });
    const socket = new WebSocket(`${address.replace(/^http/, 'ws')}/v1/realtime?model=gpt-4o-realtime-slow`, {
      headers: { authorization: `Bearer ${caller.key}` },
    });
    const client = recorder(socket);
    await opened(socket);
    await client.next('session.created');
    socket.send(JSON.stringify({ type: 'response.create' }));
    await client.next('response.output_audio.delta');
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    await draining.close();
    expect(await closed).toBe(1001);
    expect(client.count('response.done')).toBe(0);
    const deltas = client.count('response.output_audio.delta');
    expect(deltas).toBeGreaterThan(0);
    const rows = await waitFor(async () => {
      const found = await consumeLogs(caller.userId);
      return found.length === 1 ? found : undefined;
    });
    // Counted: each delta is one output audio token (3,200 base64 characters); the relay saw at least those sent.
    expect(rows[0]!.completionTokens).toBeGreaterThanOrEqual(deltas);
    expect(JSON.parse(rows[0]!.other ?? '{}')).toMatchObject({ realtime: true, usage_counted: true });
    await waitFor(async () =>
      (await quotaOf(caller.userId)) === 2_000_000 - rows[0]!.quota ? true : undefined,
    );
  });
});

import type { AddressInfo } from 'node:net';
import { buildApp } from '@turnpike/api';
import { buildRelayApp, registerRelay } from '@turnpike/relay';
import { readSample } from '@turnpike/relay/metrics/prometheus-text';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';

const CHAT = '/v1/chat/completions';
const METRICS_TOKEN = 'scrape-token-0123456789';

let t: RelayTestApp;
let fake: FakeOpenAi;
let slowFake: FakeOpenAi;
let channelId: number;
let auth: { authorization: string };

const scrape = async (app: FastifyInstance = t.relay) => {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toContain('text/plain');
  return response.body;
};

const chat = (body: Record<string, unknown>, headers: Record<string, string> = auth) =>
  t.relay.inject({ method: 'POST', url: CHAT, headers, payload: body });

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  slowFake = await startFakeOpenAi({
    apiKey: 'sk-upstream',
    chunkDelayMs: 200,
    reply: 'one two three four five',
  });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5, 'slow-model': 1 }));
  channelId = (await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' })).id;
  await t.seedChannel({ key: 'sk-upstream', baseUrl: slowFake.url, models: 'slow-model' });
  const user = await t.seedUser({ quota: 10_000_000 });
  const token = await t.seedToken(user.id);
  auth = { authorization: `Bearer sk-${token.key}` };
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), slowFake?.close()]);
});

describe('GET /metrics', () => {
  it('counts a served chat call by route and status, with nothing left in flight', async () => {
    const before = await scrape();
    const served = (text: string) =>
      readSample(text, 'turnpike_relay_http_requests_total', { route: CHAT, status: '200' }) ?? 0;
    const response = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.statusCode).toBe(200);
    const after = await scrape();
    expect(served(after) - served(before)).toBe(1);
    expect(readSample(after, 'turnpike_relay_inflight_requests')).toBe(0);
    expect(readSample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts rejected and unmatched requests too, under route patterns rather than URLs', async () => {
    const refused = await chat(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: 'Bearer sk-nobody-nobody-nobody-nobody' },
    );
    expect(refused.statusCode).toBe(401);
    expect((await t.relay.inject({ method: 'GET', url: '/v1/no/such/thing?x=1' })).statusCode).toBe(404);
    expect(
      (await t.relay.inject({ method: 'GET', url: '/v1/models/gpt-4o-mini', headers: auth })).statusCode,
    ).toBe(200);
    const text = await scrape();
    expect(readSample(text, 'turnpike_relay_http_requests_total', { route: CHAT, status: '401' })).toBe(1);
    expect(
      readSample(text, 'turnpike_relay_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBe(1);
    expect(
      readSample(text, 'turnpike_relay_http_requests_total', { route: '/v1/models/:model', status: '200' }),
    ).toBe(1);
    expect(text).not.toContain('/v1/no/such/thing');
    expect(text).not.toContain('/v1/models/gpt-4o-mini');
    // The scrape itself is not relay traffic.
    expect(text).not.toContain('route="/metrics"');
  });

  it('holds a stream in flight while it runs and counts a client that leaves as 499', async () => {
    await t.relay.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.relay.server.address() as AddressInfo;
    const leaving = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}${CHAT}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'slow-model',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
      signal: leaving.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    const streaming = await scrape();
    expect(readSample(streaming, 'turnpike_relay_inflight_requests')).toBe(1);
    expect(readSample(streaming, 'turnpike_relay_active_streams')).toBe(1);
    leaving.abort();
    await reader.cancel().catch(() => {});
    const deadline = Date.now() + 3000;
    let text = await scrape();
    while (readSample(text, 'turnpike_relay_inflight_requests') !== 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = await scrape();
    }
    expect(readSample(text, 'turnpike_relay_inflight_requests')).toBe(0);
    expect(readSample(text, 'turnpike_relay_active_streams')).toBe(0);
    expect(readSample(text, 'turnpike_relay_http_requests_total', { route: CHAT, status: '499' })).toBe(1);
  });

  it('shows a served call in the latency histograms, tokens and quota', async () => {
    const response = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    expect(response.statusCode).toBe(200);
    const quota = Number(response.headers['x-turnpike-quota']);
    const usage = response.json().usage as { prompt_tokens: number; completion_tokens: number };
    const text = await scrape();
    const labels = { route: CHAT, stream: 'false' };
    expect(readSample(text, 'turnpike_relay_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(
      1,
    );
    expect(readSample(text, 'turnpike_relay_upstream_duration_seconds_count', labels)).toBeGreaterThanOrEqual(
      1,
    );
    expect(readSample(text, 'turnpike_relay_overhead_seconds_count', labels)).toBeGreaterThanOrEqual(1);
    expect(
      readSample(text, 'turnpike_relay_time_to_first_token_seconds_count', labels),
    ).toBeGreaterThanOrEqual(1);
    expect(
      readSample(text, 'turnpike_relay_calls_total', {
        route: CHAT,
        model: 'gpt-4o-mini',
        channel: String(channelId),
        status: '200',
        stream: 'false',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      readSample(text, 'turnpike_relay_prompt_tokens_total', { model: 'gpt-4o-mini' }),
    ).toBeGreaterThanOrEqual(usage.prompt_tokens);
    expect(
      readSample(text, 'turnpike_relay_completion_tokens_total', { model: 'gpt-4o-mini' }),
    ).toBeGreaterThanOrEqual(usage.completion_tokens);
    expect(
      readSample(text, 'turnpike_relay_quota_spent_total', { model: 'gpt-4o-mini' }),
    ).toBeGreaterThanOrEqual(quota);
    const genAi = { gen_ai_operation_name: 'chat', gen_ai_request_model: 'gpt-4o-mini', error_type: '' };
    expect(readSample(text, 'gen_ai_server_request_duration_seconds_count', genAi)).toBeGreaterThanOrEqual(1);
    expect(
      readSample(text, 'gen_ai_client_token_usage_sum', { ...genAi, gen_ai_token_type: 'output' }),
    ).toBeGreaterThanOrEqual(usage.completion_tokens);
  });

  it('reports each channel as enabled in the channel health gauge', async () => {
    const text = await scrape();
    expect(
      readSample(text, 'turnpike_relay_channel_state', { channel: String(channelId), state: 'enabled' }),
    ).toBe(1);
    expect(readSample(text, 'turnpike_relay_channel_state', { channel: String(channelId) })).toBe(1);
  });

  it('asks for the bearer token when METRICS_TOKEN is set', async () => {
    const deps = t.runtime.deps;
    const guarded = await buildRelayApp({ ...deps, config: { ...deps.config, metricsToken: METRICS_TOKEN } });
    try {
      const none = await guarded.inject({ method: 'GET', url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.body).not.toContain('turnpike_relay');
      const wrong = await guarded.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: 'Bearer scrape-token-0123456780' },
      });
      expect(wrong.statusCode).toBe(401);
      const right = await guarded.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(right.statusCode).toBe(200);
      expect(right.body).toContain('turnpike_relay_inflight_requests');
    } finally {
      await guarded.close();
    }
  });

  it('is served beside the console API when one process does both (ROLE=all)', async () => {
    const all = await buildApp(t.runtime.deps);
    try {
      await registerRelay(all, t.runtime.deps);
      const text = await scrape(all);
      expect(readSample(text, 'turnpike_relay_inflight_requests')).toBe(0);
      expect((await all.inject({ method: 'GET', url: '/api/status' })).statusCode).toBe(200);
      // Console API traffic is not counted as relay traffic.
      expect(await scrape(all)).not.toMatch(/turnpike_relay_http_requests_total\{route="\/api/);
    } finally {
      await all.close();
    }
  });
});

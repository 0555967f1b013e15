import { describe, expect, it } from 'vitest';
import { buildRoutingTable } from '../routing/pick.ts';
import { readSample } from './prometheus-text.ts';
import {
  CLIENT_CLOSED_STATUS,
  createRelayMetrics,
  isModelKnown,
  OTHER_MODEL,
  type RelayCall,
  UNMATCHED_ROUTE,
} from './relay-metrics.ts';

const CHAT = '/v1/chat/completions';

const call = (fields: Partial<RelayCall> = {}): RelayCall => ({
  route: CHAT,
  model: 'gpt-4o-mini',
  channelId: 3,
  status: 200,
  isStream: false,
  totalMs: 120,
  upstreamMs: 119.5,
  frtMs: 119,
  promptTokens: 10,
  completionTokens: 20,
  quota: 150,
  ...fields,
});

const known = (model: string) => model.startsWith('gpt-');

describe('relay metrics', () => {
  it('counts each recorded call once under its route, model, channel, status and stream flag', async () => {
    const metrics = createRelayMetrics({ isKnownModel: known, processMetrics: false });
    metrics.recordCall(call());
    metrics.recordCall(call());
    metrics.recordCall(call({ isStream: true }));
    metrics.recordCall(call({ channelId: 4, status: 429 }));
    const text = await metrics.render();
    const calls = (labels: Record<string, string>) => readSample(text, 'turnpike_relay_calls_total', labels);
    expect(calls({ route: CHAT, model: 'gpt-4o-mini', channel: '3', status: '200', stream: 'false' })).toBe(
      2,
    );
    expect(calls({ channel: '3', status: '200', stream: 'true' })).toBe(1);
    expect(calls({ channel: '4', status: '429' })).toBe(1);
    expect(calls({})).toBe(4);
  });

  it('adds up prompt tokens, completion tokens and quota per model', async () => {
    const metrics = createRelayMetrics({ isKnownModel: known, processMetrics: false });
    metrics.recordCall(call({ promptTokens: 7, completionTokens: 11, quota: 100 }));
    metrics.recordCall(call({ promptTokens: 5, completionTokens: 2, quota: 40 }));
    metrics.recordCall(call({ model: 'gpt-4o', promptTokens: 1, completionTokens: 1, quota: 9 }));
    const text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_prompt_tokens_total', { model: 'gpt-4o-mini' })).toBe(12);
    expect(readSample(text, 'turnpike_relay_completion_tokens_total', { model: 'gpt-4o-mini' })).toBe(13);
    expect(readSample(text, 'turnpike_relay_quota_spent_total', { model: 'gpt-4o-mini' })).toBe(140);
    expect(readSample(text, 'turnpike_relay_quota_spent_total', { model: 'gpt-4o' })).toBe(9);
  });

  it('puts latencies in seconds into cumulative buckets, the overhead being total minus upstream', async () => {
    const metrics = createRelayMetrics({ isKnownModel: known, processMetrics: false });
    metrics.recordCall(call({ totalMs: 40, upstreamMs: 39.8, frtMs: 30 }));
    metrics.recordCall(call({ totalMs: 2000, upstreamMs: 1997, frtMs: 1500 }));
    metrics.recordCall(call({ frtMs: undefined }));
    const text = await metrics.render();
    const bucket = (name: string, le: string) =>
      readSample(text, `turnpike_relay_${name}_bucket`, { route: CHAT, stream: 'false', le });
    expect(bucket('request_duration_seconds', '0.05')).toBe(1);
    expect(bucket('request_duration_seconds', '0.25')).toBe(2);
    expect(bucket('request_duration_seconds', '2.5')).toBe(3);
    expect(bucket('request_duration_seconds', '+Inf')).toBe(3);
    expect(readSample(text, 'turnpike_relay_request_duration_seconds_sum', { stream: 'false' })).toBeCloseTo(
      2.16,
      6,
    );
    expect(readSample(text, 'turnpike_relay_upstream_duration_seconds_count', { route: CHAT })).toBe(3);
    // Overheads: 0.2 ms, 3 ms, 0.5 ms.
    expect(bucket('overhead_seconds', '0.00025')).toBe(1);
    expect(bucket('overhead_seconds', '0.0005')).toBe(2);
    expect(bucket('overhead_seconds', '0.0025')).toBe(2);
    expect(bucket('overhead_seconds', '0.005')).toBe(3);
    // A call without a first token is left out of the first-token histogram.
    expect(readSample(text, 'turnpike_relay_time_to_first_token_seconds_count', { route: CHAT })).toBe(2);
    expect(bucket('time_to_first_token_seconds', '0.05')).toBe(1);
  });

  it('counts models that are neither routed nor priced as other', async () => {
    const metrics = createRelayMetrics({ isKnownModel: known, processMetrics: false });
    for (let i = 0; i < 50; i += 1) metrics.recordCall(call({ model: `made-up-${i}` }));
    metrics.recordCall(call({ model: 'gpt-4o' }));
    const text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_calls_total', { model: OTHER_MODEL })).toBe(50);
    expect(readSample(text, 'turnpike_relay_prompt_tokens_total', { model: OTHER_MODEL })).toBe(500);
    expect(text).not.toContain('made-up');
    const modelLabels = new Set(
      text
        .split('\n')
        .filter((line) => line.startsWith('turnpike_relay_calls_total'))
        .map((line) => /model="([^"]*)"/.exec(line)?.[1]),
    );
    expect(modelLabels).toEqual(new Set([OTHER_MODEL, 'gpt-4o']));
  });

  it('sees a model that becomes known once its cached label expires', async () => {
    let routed = new Set<string>();
    const metrics = createRelayMetrics({
      isKnownModel: (model) => routed.has(model),
      modelLabelTtlMs: 0,
      processMetrics: false,
    });
    expect(metrics.modelLabel('new-model')).toBe(OTHER_MODEL);
    routed = new Set(['new-model']);
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(metrics.modelLabel('new-model')).toBe('new-model');
  });

  it('knows a model from the routing table (any group) or from a price table', () => {
    const table = buildRoutingTable([
      { id: 1, group: 'default', models: 'gpt-4o-mini', priority: 0, weight: 0, isEnabled: true },
      { id: 2, group: 'vip', models: 'claude-x', priority: 0, weight: 0, isEnabled: true },
      { id: 3, group: 'vip', models: 'only-disabled', priority: 0, weight: 0, isEnabled: false },
    ]);
    const ratios = { 'gpt-4.1': 1 };
    const prices = { 'dall-e-3': 0.04 };
    expect(isModelKnown('gpt-4o-mini', table, ratios, prices)).toBe(true);
    expect(isModelKnown('claude-x', table, ratios, prices)).toBe(true);
    expect(isModelKnown('gpt-4.1', table, ratios, prices)).toBe(true);
    expect(isModelKnown('dall-e-3', table, ratios, prices)).toBe(true);
    expect(isModelKnown('only-disabled', table, ratios, prices)).toBe(false);
    expect(isModelKnown('toString', table, ratios, prices)).toBe(false);
    expect(isModelKnown('anything-a-caller-invents', table, ratios, prices)).toBe(false);
  });

  it('counts route-level requests by route pattern and status, and tracks those in flight', async () => {
    const metrics = createRelayMetrics({ processMetrics: false });
    const first = metrics.requestStarted(CHAT);
    const second = metrics.requestStarted(CHAT);
    const lost = metrics.requestStarted(undefined);
    const wildcard = metrics.requestStarted('/v1/*');
    expect(metrics.inflight).toBe(4);
    let text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_inflight_requests')).toBe(4);
    metrics.requestEnded(first, 200);
    metrics.requestEnded(second, CLIENT_CLOSED_STATUS);
    metrics.requestEnded(lost, 404);
    metrics.requestEnded(wildcard, 404);
    text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_inflight_requests')).toBe(0);
    const requests = (labels: Record<string, string>) =>
      readSample(text, 'turnpike_relay_http_requests_total', labels);
    expect(requests({ route: CHAT, status: '200' })).toBe(1);
    expect(requests({ route: CHAT, status: '499' })).toBe(1);
    expect(requests({ route: UNMATCHED_ROUTE, status: '404' })).toBe(2);
  });

  it('reports channel states from the plugged-in collector on every scrape', async () => {
    const metrics = createRelayMetrics({ processMetrics: false });
    expect(await metrics.render()).not.toMatch(/^turnpike_relay_channel_state\{/m);
    let states = [
      { channelId: 1, state: 'enabled' },
      { channelId: 2, state: 'cooling_down' },
    ];
    metrics.observeChannelStates(() => states);
    let text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_channel_state', { channel: '2', state: 'cooling_down' })).toBe(1);
    states = [
      { channelId: 1, state: 'enabled' },
      { channelId: 2, state: 'auto_disabled' },
    ];
    text = await metrics.render();
    expect(readSample(text, 'turnpike_relay_channel_state', { channel: '2', state: 'cooling_down' })).toBe(
      undefined,
    );
    expect(readSample(text, 'turnpike_relay_channel_state', { channel: '2', state: 'auto_disabled' })).toBe(
      1,
    );
  });

  it('keeps the values of two relay apps in one process apart, with process metrics on both', async () => {
    const a = createRelayMetrics({ isKnownModel: known });
    const b = createRelayMetrics({ isKnownModel: known });
    a.recordCall(call());
    const [textA, textB] = await Promise.all([a.render(), b.render()]);
    expect(readSample(textA, 'turnpike_relay_calls_total')).toBe(1);
    expect(readSample(textB, 'turnpike_relay_calls_total')).toBe(undefined);
    expect(readSample(textA, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(readSample(textB, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});

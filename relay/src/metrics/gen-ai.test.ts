import { describe, expect, it } from 'vitest';
import { GEN_AI_DURATION_BUCKETS, GEN_AI_TOKEN_BUCKETS, genAiOperationOf } from './gen-ai.ts';
import { readSample } from './prometheus-text.ts';
import { createRelayMetrics, type RelayCall } from './relay-metrics.ts';

const CHAT = '/v1/chat/completions';

const call = (fields: Partial<RelayCall> = {}): RelayCall => ({
  route: CHAT,
  model: 'gpt-4o-mini',
  channelId: 3,
  status: 200,
  isStream: true,
  totalMs: 2000,
  upstreamMs: 1990,
  frtMs: 500,
  promptTokens: 100,
  completionTokens: 31,
  quota: 150,
  ...fields,
});

const known = (model: string) => model.startsWith('gpt-');
const fresh = () => createRelayMetrics({ isKnownModel: known, processMetrics: false });

describe('GenAI metrics (OpenTelemetry semantic conventions)', () => {
  it('counts tokens by type, with the requested and served model, provider and operation', async () => {
    const metrics = fresh();
    metrics.recordCall(
      call({
        servedModel: 'gpt-4o-mini-2024-07-18',
        provider: 'openai',
        cacheReadTokens: 64,
        cacheCreationTokens: 8,
        reasoningTokens: 12,
      }),
    );
    const text = await metrics.render();
    const tokens = (type: string) =>
      readSample(text, 'gen_ai_client_token_usage_sum', {
        gen_ai_operation_name: 'chat',
        gen_ai_provider_name: 'openai',
        gen_ai_request_model: 'gpt-4o-mini',
        gen_ai_response_model: 'gpt-4o-mini-2024-07-18',
        gen_ai_token_type: type,
        error_type: '',
      });
    expect(tokens('input')).toBe(100);
    expect(tokens('output')).toBe(31);
    expect(tokens('cache_read')).toBe(64);
    expect(tokens('cache_creation')).toBe(8);
    expect(tokens('reasoning')).toBe(12);
  });

  it('measures time to first token and time per output token of a successful stream', async () => {
    const metrics = fresh();
    metrics.recordCall(call());
    const text = await metrics.render();
    expect(readSample(text, 'gen_ai_server_time_to_first_token_seconds_sum')).toBeCloseTo(0.5);
    // 1.5 s after the first token for 30 more tokens: 50 ms each.
    expect(readSample(text, 'gen_ai_server_time_per_output_token_seconds_sum')).toBeCloseTo(0.05);
    expect(readSample(text, 'gen_ai_server_request_duration_seconds_sum')).toBeCloseTo(2);
    expect(
      readSample(text, 'gen_ai_server_request_duration_seconds_bucket', { le: '2.56', error_type: '' }),
    ).toBe(1);
  });

  it('labels a failed call with its error type and keeps it out of the token timings', async () => {
    const metrics = fresh();
    metrics.recordCall(call({ status: 502, promptTokens: 0, completionTokens: 0 }));
    metrics.recordCall(call({ status: 504, errorType: 'timeout', promptTokens: 0, completionTokens: 0 }));
    const text = await metrics.render();
    expect(readSample(text, 'gen_ai_server_request_duration_seconds_count', { error_type: '502' })).toBe(1);
    expect(readSample(text, 'gen_ai_server_request_duration_seconds_count', { error_type: 'timeout' })).toBe(
      1,
    );
    expect(readSample(text, 'gen_ai_server_time_to_first_token_seconds_count') ?? 0).toBe(0);
    expect(readSample(text, 'gen_ai_client_token_usage_count') ?? 0).toBe(0);
  });

  it('never labels a model nobody configured, requested or served', async () => {
    const metrics = fresh();
    metrics.recordCall(call({ model: 'user-sent-anything', servedModel: 'upstream-secret-name' }));
    const text = await metrics.render();
    expect(text).not.toContain('user-sent-anything');
    expect(text).not.toContain('upstream-secret-name');
    expect(
      readSample(text, 'gen_ai_server_request_duration_seconds_count', { gen_ai_request_model: 'other' }),
    ).toBe(1);
  });

  it('uses the bucket boundaries the conventions advise', async () => {
    const metrics = fresh();
    metrics.recordCall(call());
    const text = await metrics.render();
    for (const bound of GEN_AI_DURATION_BUCKETS)
      expect(text).toMatch(
        new RegExp(`gen_ai_server_request_duration_seconds_bucket\\{[^}]*le="${bound}"\\}`),
      );
    expect(GEN_AI_TOKEN_BUCKETS.at(-1)).toBe(4 ** 13);
  });

  it('names the operation of each relay route', () => {
    expect(genAiOperationOf('/v1/chat/completions')).toBe('chat');
    expect(genAiOperationOf('/pg/chat/completions')).toBe('chat');
    expect(genAiOperationOf('/v1/completions')).toBe('text_completion');
    expect(genAiOperationOf('/v1/engines/:model/embeddings')).toBe('embeddings');
    expect(genAiOperationOf('/v1beta/models/:model')).toBe('generate_content');
  });
});

describe('gateway metrics the relay runtime feeds', () => {
  it('reads Redis state, config version and log queue depth when scraped', async () => {
    const metrics = fresh();
    let degraded = false;
    let depth = 3;
    metrics.observeRedisDegraded(() => degraded);
    metrics.observeConfigVersion(() => 42);
    metrics.observeLogQueueDepth(() => depth);
    expect(readSample(await metrics.render(), 'turnpike_redis_degraded')).toBe(0);
    degraded = true;
    depth = 17;
    const text = await metrics.render();
    expect(readSample(text, 'turnpike_redis_degraded')).toBe(1);
    expect(readSample(text, 'turnpike_config_version_applied')).toBe(42);
    expect(readSample(text, 'turnpike_log_queue_depth')).toBe(17);
  });

  it('counts billing adjustments by reason, every reason present from the start', async () => {
    const metrics = fresh();
    const before = await metrics.render();
    for (const reason of ['refund', 'client_gone', 'missing_usage', 'upstream_error'])
      expect(readSample(before, 'turnpike_billing_adjustments_total', { reason })).toBe(0);
    metrics.recordBillingAdjustment('refund');
    metrics.recordBillingAdjustment('refund');
    metrics.recordBillingAdjustment('client_gone');
    const text = await metrics.render();
    expect(readSample(text, 'turnpike_billing_adjustments_total', { reason: 'refund' })).toBe(2);
    expect(readSample(text, 'turnpike_billing_adjustments_total', { reason: 'client_gone' })).toBe(1);
  });

  it('measures config apply time, the settlement backlog and rate-limit refusals', async () => {
    const metrics = fresh();
    metrics.recordConfigApply(0.3);
    metrics.recordConfigApply(3);
    metrics.observeSettlementBacklog(() => ({ records: 120, capacity: 200_000, oldestSeconds: 42.5 }));
    metrics.recordRateLimited();
    const text = await metrics.render();
    expect(readSample(text, 'turnpike_config_apply_seconds_count')).toBe(2);
    expect(readSample(text, 'turnpike_config_apply_seconds_bucket', { le: '2' })).toBe(1);
    expect(readSample(text, 'turnpike_settlement_queue_records')).toBe(120);
    expect(readSample(text, 'turnpike_settlement_queue_capacity')).toBe(200_000);
    expect(readSample(text, 'turnpike_settlement_queue_oldest_seconds')).toBe(42.5);
    expect(readSample(text, 'turnpike_relay_rate_limited_total')).toBe(1);
  });
});

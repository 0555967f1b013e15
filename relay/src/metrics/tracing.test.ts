import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { createRelayMetrics, type RelayCall } from './relay-metrics.ts';
import { disableRelayTracing, enableRelayTracing, isRelayTracingOn } from './tracing.ts';

const call = (fields: Partial<RelayCall> = {}): RelayCall => ({
  route: '/v1/chat/completions',
  model: 'gpt-4o-mini',
  channelId: 7,
  status: 200,
  isStream: true,
  totalMs: 1500,
  upstreamMs: 1400,
  frtMs: 300,
  promptTokens: 12,
  completionTokens: 40,
  quota: 90,
  requestId: 'req-123',
  ...fields,
});

/** Tracing on, into memory; `spans()` flushes first (the processor exports asynchronously). */
const traced = () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  enableRelayTracing(provider);
  return {
    async spans() {
      await provider.forceFlush();
      return exporter.getFinishedSpans();
    },
  };
};
const ms = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;

afterEach(() => disableRelayTracing());

describe('relay tracing', () => {
  it('is off unless a process turns it on, and then records no span', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    enableRelayTracing(provider);
    disableRelayTracing();
    expect(isRelayTracingOn()).toBe(false);
    createRelayMetrics({ processMetrics: false }).recordCall(call());
    await provider.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('gives each call a span with its gen_ai attributes and request id, and a child for the upstream', async () => {
    const tracing = traced();
    createRelayMetrics({ processMetrics: false }).recordCall(
      call({ servedModel: 'gpt-4o-mini-2024-07-18', provider: 'openai', cacheReadTokens: 4 }),
    );
    const spans = await tracing.spans();
    const server = spans.find((span) => span.kind === SpanKind.SERVER);
    const upstream = spans.find((span) => span.kind === SpanKind.CLIENT);
    expect(server?.name).toBe('chat gpt-4o-mini');
    expect(server?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 40,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'turnpike.request.id': 'req-123',
      'turnpike.channel.id': 7,
    });
    expect(ms(server?.duration as [number, number])).toBeCloseTo(1500, 0);
    expect(server?.events.map((event) => event.name)).toEqual(['gen_ai.first_token']);
    expect(upstream?.parentSpanContext?.spanId).toBe(server?.spanContext().spanId);
    expect(ms(upstream?.duration as [number, number])).toBeCloseTo(1400, 0);
  });

  it('marks a failed call with its error type', async () => {
    const tracing = traced();
    createRelayMetrics({ processMetrics: false }).recordCall(call({ status: 502, completionTokens: 0 }));
    const server = (await tracing.spans()).find((span) => span.kind === SpanKind.SERVER);
    expect(server?.status.code).toBe(SpanStatusCode.ERROR);
    expect(server?.attributes['error.type']).toBe('502');
  });
});

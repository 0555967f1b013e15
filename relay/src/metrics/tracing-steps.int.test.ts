/**
 * With tracing on, a relayed call is one SERVER span with a child per pipeline step and per upstream attempt,
 * each carrying the request id: where a slow call spent its time, without reading logs.
 */
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp, seedFakeModels } from '../testing/relay-test-app.ts';
import { disableRelayTracing, enableRelayTracing } from './tracing.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
let broken: FakeOpenAi;
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(async () => {
  fake = await startFakeOpenAi({});
  broken = await startFakeOpenAi({ error: 500 });
  t = await createRelayTestApp();
  await seedFakeModels(t, fake.url);
  // A higher-priority channel that fails: the call is retried on the working one.
  await t.seedChannel({ key: 'sk-broken', baseUrl: broken.url, models: 'gpt-4o-mini', priority: 10 });
  await t.runtime.deps.options.set('RetryTimes', '1');
  await t.startRelay();
  enableRelayTracing(provider);
});
afterAll(async () => {
  disableRelayTracing();
  await t?.close();
  await fake?.close();
  await broken?.close();
});

describe('trace of a relayed call', () => {
  it('has a span per step and per upstream attempt under the call, each with the request id', async () => {
    const user = await t.seedUser();
    const token = await t.seedToken(user.id);
    const answer = await t.relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer sk-${token.key}`, 'x-request-id': 'trace-steps-1' },
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(answer.statusCode).toBe(200);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const call = spans.find((s) => s.name === 'chat gpt-4o-mini');
    expect(call?.attributes['turnpike.request.id']).toBe('trace-steps-1');
    const children = spans.filter((s) => s.parentSpanContext?.spanId === call?.spanContext().spanId);
    expect(children.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'turnpike authenticate',
        'turnpike rate limit',
        'turnpike read request',
        'turnpike price',
        'turnpike hold',
        'turnpike answer',
        'turnpike settle',
        'upstream attempt 1',
        'upstream attempt 2',
      ]),
    );
    for (const child of children) expect(child.attributes['turnpike.request.id']).toBe('trace-steps-1');
    const [first, second] = ['upstream attempt 1', 'upstream attempt 2'].map((n) =>
      children.find((s) => s.name === n),
    );
    expect(first?.status.code).toBe(2); // ERROR: the broken channel
    expect(second?.status.code).not.toBe(2);
    expect(first?.attributes['turnpike.channel.id']).not.toBe(second?.attributes['turnpike.channel.id']);
  });
});

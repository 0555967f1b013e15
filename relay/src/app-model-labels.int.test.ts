/**
 * The relay's metrics name a model only when an administrator configured it (routed, or priced), so callers cannot
 * grow the label set with invented names. A model priced only for a group (`GroupModelRatio`, `GroupModelPrice`,
 * docs/adr/0017) is configured too: it gets its own label, like a model of the un-grouped maps.
 */

import { Role } from '@turnpike/core/domain/users';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_MODEL } from './metrics/relay-metrics.ts';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';

let t: RelayTestApp;
let fake: FakeOpenAi;
/** An administrator's key forcing the one channel, so models no channel lists still reach the upstream. */
let forced: string;

/** The model label values of the per-call series. */
async function modelLabels(): Promise<Set<string>> {
  const text = (await t.relay.inject({ method: 'GET', url: '/metrics' })).body;
  return new Set(
    [...text.matchAll(/^turnpike_relay_calls_total\{[^}]*model="([^"]*)"/gm)].map((match) => match[1] ?? ''),
  );
}

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-upstream' });
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  // Self-use mode bills a model priced nowhere, so it reaches the upstream and is counted.
  await options.set('SelfUseModeEnabled', 'true');
  await options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1 }));
  await options.set('GroupModelRatio', JSON.stringify({ vip: { 'vip-ratio-model': 0.5 } }));
  await options.set('GroupModelPrice', JSON.stringify({ vip: { 'vip-call-model': 0.01 } }));
  const channel = await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  const admin = await t.seedUser({ role: Role.Admin, group: 'default' });
  forced = `sk-${(await t.seedToken(admin.id)).key}-${channel.id}`;
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('model labels of the relay metrics', () => {
  it('labels a model priced only in a group map by its name, and a model priced nowhere as other', async () => {
    for (const model of ['vip-ratio-model', 'vip-call-model', 'invented-model']) {
      const response = await t.relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer ${forced}` },
        payload: { model, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    const labels = await modelLabels();
    expect(labels).toContain('vip-ratio-model');
    expect(labels).toContain('vip-call-model');
    expect(labels).toContain(OTHER_MODEL);
    expect(labels).not.toContain('invented-model');
  });
});

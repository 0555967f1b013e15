/**
 * The 1-hour cache-write price is set where prices are set (`PUT /api/option/`, the pricing editor's JSON fields):
 * a model's own `CreateCache1hRatio` entry and a group's `GroupCreateCache1hRatio` entry change what a Claude call
 * with 1-hour cache writes costs, and the next call after the console says "saved" already pays it.
 *
 * The answer's `usage` is shaped as Anthropic documents it (relay/src/testing/claude-cache-usage.ts: 1,000 input,
 * 1,000 written to a 1-hour cache, 1,000 to a 5-minute cache, 3,000 read, 500 output). Prices are the operator's (model ratio 1.5 = USD 3 per million input tokens, 1 USD = 500,000 quota).
 */

import { SPLIT_CACHE_USAGE } from '@turnpike/relay/testing/claude-cache-usage';
import { type FakeProviders, startFakeProviders } from '@turnpike/relay/testing/fake-providers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { setupRoot } from '../testing/test-app.ts';

const MODEL = 'claude-sonnet-4-5';
let t: RelayTestApp;
let providers: FakeProviders;
let admin: Awaited<ReturnType<typeof setupRoot>>;
const keys: Record<'default' | 'vip', string> = { default: '', vip: '' };

beforeAll(async () => {
  providers = await startFakeProviders({ anthropicUsage: SPLIT_CACHE_USAGE });
  t = await createRelayTestApp();
  await t.seedChannel({ type: 14, key: 'sk-ant-test', baseUrl: providers.url, models: MODEL });
  await t.seedChannel({ type: 14, key: 'sk-ant-test', baseUrl: providers.url, models: MODEL, group: 'vip' });
  await t.startRelay();
  admin = await setupRoot(t.app);
  await admin.put('/api/option/', { key: 'GroupRatio', value: JSON.stringify({ default: 1, vip: 1 }) });
  for (const group of ['default', 'vip'] as const) {
    const user = await t.seedUser({ quota: 100_000_000, group });
    keys[group] = (await t.seedToken(user.id)).key;
  }
});

afterAll(async () => {
  await t?.close();
  await providers?.close();
});

const ask = async (group: 'default' | 'vip') => {
  const answer = await t.relay.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { 'x-api-key': `sk-${keys[group]}`, 'anthropic-version': '2023-06-01' },
    payload: { model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] },
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return Number(answer.headers['x-turnpike-quota']);
};

describe('the 1-hour cache-write price set in the console', () => {
  it('bills the default of twice the input price until an entry is saved, then the saved one', async () => {
    // $3 + $6 + $3.75 + $0.90 + $7.50 = $21.15 per thousand requests: 10,575 quota.
    expect(await ask('default')).toBe(10_575);
    const saved = await admin.put('/api/option/', {
      key: 'CreateCache1hRatio',
      value: JSON.stringify({ [MODEL]: 3 }),
    });
    expect(saved.json().success).toBe(true);
    // The 1,000 1-hour writes at 3 × $3 = $9 per million: $24.15 per thousand requests, 12,075 quota.
    expect(await ask('default')).toBe(12_075);
  });

  it("bills a group's own 1-hour cache-write ratio to that group only", async () => {
    const saved = await admin.put('/api/option/', {
      key: 'GroupCreateCache1hRatio',
      value: JSON.stringify({ vip: { [MODEL]: 1.25 } }),
    });
    expect(saved.json().success).toBe(true);
    // vip's 1-hour writes at 1.25 × $3 = $3.75 per million, like the 5-minute ones: $18.90, 9,450 quota.
    expect(await ask('vip')).toBe(9_450);
    expect(await ask('default')).toBe(12_075);
  });

  it('refuses a 1-hour cache-write ratio that is not a number', async () => {
    const refused = await admin.put('/api/option/', {
      key: 'CreateCache1hRatio',
      value: JSON.stringify({ [MODEL]: 'two' }),
    });
    expect(refused.json().success).toBe(false);
  });
});

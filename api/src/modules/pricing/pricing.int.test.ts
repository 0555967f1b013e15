import { abilities, channels, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

interface Entry {
  model_name: string;
  quota_type: number;
  model_ratio: number;
  model_price: number;
  completion_ratio: number;
  enable_groups: string[];
}

/** The six fields of a row the reference answers, whatever the row adds beside them. */
const referenceFields = (entry: Entry | undefined) =>
  entry && {
    model_name: entry.model_name,
    quota_type: entry.quota_type,
    model_ratio: entry.model_ratio,
    model_price: entry.model_price,
    completion_ratio: entry.completion_ratio,
    enable_groups: entry.enable_groups,
  };

describe('pricing page', () => {
  let t: TestApp;
  let root: ConsoleClient;
  const visitor = () => t.app.inject({ method: 'GET', url: '/api/pricing' });
  const entryOf = (entries: Entry[], model: string) => entries.find((e) => e.model_name === model);

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists nothing before a channel serves a model', async () => {
    const response = await visitor();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, data: [] });
  });

  it('shows a visitor the selectable groups and the enabled groups serving each model', async () => {
    await t.runtime.deps.db.insert(abilities).values([
      { group: 'default', model: 'gpt-4o', channelId: 1 },
      { group: 'vip', model: 'gpt-4o', channelId: 1 },
      { group: 'default', model: 'gpt-4o', channelId: 2 },
      { group: 'svip', model: 'gpt-4o', channelId: 3 },
      { group: 'default', model: 'gpt-4o-mini', channelId: 4, enabled: false },
      { group: 'vip', model: 'dall-e-3', channelId: 5 },
      { group: 'default', model: 'unpriced-private-model', channelId: 6 },
    ]);
    const body = (await visitor()).json();
    expect(body.group_ratio).toEqual({ default: 1, vip: 1 });
    expect(body.usable_group).toEqual({ default: 'Default group', vip: 'VIP group' });
    expect(entryOf(body.data, 'gpt-4o')?.enable_groups).toEqual(['default', 'vip']);
    // Only a disabled channel serves it: not listed.
    expect(entryOf(body.data, 'gpt-4o-mini')).toBeUndefined();
    expect(entryOf(body.data, 'dall-e-3')?.enable_groups).toEqual(['vip']);
    expect(entryOf(body.data, 'unpriced-private-model')).toBeUndefined();
    // The reference's fields, unchanged; a cached-input price beside them (GPT-4o: $1.25 beside $2.50).
    expect(referenceFields(entryOf(body.data, 'gpt-4o'))).toEqual({
      model_name: 'gpt-4o',
      quota_type: 0,
      model_ratio: 1.25,
      model_price: 0,
      completion_ratio: 4,
      enable_groups: ['default', 'vip'],
    });
    expect(entryOf(body.data, 'gpt-4o')).toMatchObject({ cache_ratio: 0.5 });
    expect(referenceFields(entryOf(body.data, 'dall-e-3'))).toEqual({
      model_name: 'dall-e-3',
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.04,
      completion_ratio: 0,
      enable_groups: ['vip'],
    });
    const names = (body.data as Entry[]).map((e) => e.model_name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('sorts per-token models first, gpt models first within each, then by name', async () => {
    await t.runtime.deps.db.insert(abilities).values(
      ['claude-3-haiku-20240307', 'gpt-3.5-turbo', 'text-embedding-3-small'].map((model, i) => ({
        group: 'default',
        model,
        channelId: 10 + i,
      })),
    );
    const entries = (await visitor()).json().data as Entry[];
    expect(entries.map((e) => e.model_name)).toEqual([
      'gpt-3.5-turbo',
      'gpt-4o',
      'claude-3-haiku-20240307',
      'text-embedding-3-small',
      'dall-e-3',
    ]);
  });

  it("adds a signed-in user's own group with its ratio", async () => {
    const sam = await registerUser(t.app, 'sam');
    await t.runtime.deps.db.update(users).set({ group: 'svip' }).where(eq(users.id, sam.userId!));
    expect(
      (
        await root.put('/api/option/', { key: 'GroupRatio', value: '{"default":1,"vip":1.5,"svip":0.8}' })
      ).json().success,
    ).toBe(true);
    const body = (await sam.get('/api/pricing')).json();
    expect(body.group_ratio).toEqual({ default: 1, vip: 1.5, svip: 0.8 });
    expect(Object.keys(body.usable_group).sort()).toEqual(['default', 'svip', 'vip']);
    expect(entryOf(body.data, 'gpt-4o')?.enable_groups).toEqual(['default', 'svip', 'vip']);
    // A visitor still does not see the svip group.
    expect((await visitor()).json().group_ratio).toEqual({ default: 1, vip: 1.5 });
  });

  it('follows the pricing options, and rest_model_ratio restores the built-in ratios', async () => {
    const set = async (key: string, value: string) =>
      expect((await root.put('/api/option/', { key, value })).json().success).toBe(true);
    await t.runtime.deps.db.insert(abilities).values([
      { group: 'default', model: 'my-model', channelId: 20 },
      { group: 'default', model: 'my-per-call', channelId: 20 },
    ]);
    await set('ModelRatio', '{"gpt-4o":3,"my-model":0.5}');
    await set('ModelPrice', '{"my-per-call":0.25}');
    await set('CompletionRatio', '{"my-model":2}');
    const entries = (await visitor()).json().data as Entry[];
    expect(entries.map((e) => e.model_name)).toEqual(['gpt-4o', 'my-model', 'my-per-call']);
    expect(entryOf(entries, 'gpt-4o')).toMatchObject({ quota_type: 0, model_ratio: 3, completion_ratio: 4 });
    expect(entryOf(entries, 'my-model')).toMatchObject({ model_ratio: 0.5, completion_ratio: 2 });
    expect(entryOf(entries, 'my-per-call')).toMatchObject({ quota_type: 1, model_price: 0.25 });

    // A per-call price wins over a ratio for the same model.
    await set('ModelPrice', '{"gpt-4o":0.5}');
    expect(entryOf((await visitor()).json().data, 'gpt-4o')).toMatchObject({
      quota_type: 1,
      model_price: 0.5,
    });

    await set('ModelPrice', '{}');
    expect((await root.post('/api/option/rest_model_ratio')).json().success).toBe(true);
    const restored = (await visitor()).json().data as Entry[];
    expect(entryOf(restored, 'gpt-4o')).toMatchObject({ quota_type: 0, model_ratio: 1.25 });
    // Back to the built-in ratios: my-model has none and drops out, as does dall-e-3 (ModelPrice is empty now).
    expect(restored.map((e) => e.model_name)).toEqual([
      'gpt-3.5-turbo',
      'gpt-4o',
      'claude-3-haiku-20240307',
      'text-embedding-3-small',
    ]);
  });
});

/** A fresh app with root, a user of group vip, and each model served to the default and vip groups. */
async function appServingVip(models: readonly string[], username: string) {
  const t = await createTestApp();
  const root = await setupRoot(t.app);
  const vip = await registerUser(t.app, username);
  await t.runtime.deps.db.update(users).set({ group: 'vip' }).where(eq(users.id, vip.userId!));
  await t.runtime.deps.db.insert(abilities).values(
    models.flatMap((model, i) => [
      { group: 'default', model, channelId: i + 1 },
      { group: 'vip', model, channelId: i + 1 },
    ]),
  );
  return { t, root, vip };
}

describe("pricing page: a group's own prices", () => {
  let t: TestApp;
  let root: ConsoleClient;
  let vip: ConsoleClient;
  let plain: ConsoleClient;
  const set = async (key: string, value: unknown) =>
    expect((await root.put('/api/option/', { key, value: JSON.stringify(value) })).json().success).toBe(true);
  const entryOf = (entries: Entry[], model: string) => entries.find((e) => e.model_name === model);
  /** What the page shows per 1M input tokens (or per call) for the group: entry × group_ratio, as the console does. */
  const shown = (
    body: { data: Entry[]; group_ratio: Record<string, number> },
    model: string,
    group: string,
  ) => {
    const entry = entryOf(body.data, model);
    const ratio = body.group_ratio[group] ?? Number.NaN;
    return entry?.quota_type === 1
      ? entry.model_price * ratio
      : (entry?.model_ratio ?? Number.NaN) * ratio * 2;
  };

  beforeAll(async () => {
    ({ t, root, vip } = await appServingVip(
      ['gpt-4o', 'gpt-3.5-turbo', 'dall-e-3', 'vip-only-model'],
      'vera',
    ));
    plain = await registerUser(t.app, 'dana');
    await set('GroupRatio', { default: 1, vip: 0.8 });
    await set('GroupModelRatio', { vip: { 'gpt-4o': 2, 'vip-only-model': 0.5 } });
    await set('GroupCompletionRatio', { vip: { 'gpt-4o': 3 } });
    await set('GroupModelPrice', { vip: { 'gpt-3.5-turbo': 0.01 } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows a caller of the group what it pays: its own prices without the group ratio, others with it', async () => {
    const body = (await vip.get('/api/pricing')).json();
    expect(body.group_ratio).toEqual({ default: 1, vip: 0.8 });
    // gpt-4o: vip's own ratio 2 (USD 4 per 1M input tokens), its own completion ratio, GroupRatio not applied.
    expect(entryOf(body.data, 'gpt-4o')).toMatchObject({ quota_type: 0, completion_ratio: 3 });
    expect(shown(body, 'gpt-4o', 'vip')).toBeCloseTo(4, 10);
    // gpt-3.5-turbo: vip's own per-call price, USD 0.01 a call.
    expect(entryOf(body.data, 'gpt-3.5-turbo')).toMatchObject({ quota_type: 1, model_ratio: 0 });
    expect(shown(body, 'gpt-3.5-turbo', 'vip')).toBeCloseTo(0.01, 10);
    // Priced only for vip: listed for vip.
    expect(entryOf(body.data, 'vip-only-model')).toMatchObject({
      quota_type: 0,
      enable_groups: ['default', 'vip'],
    });
    expect(shown(body, 'vip-only-model', 'vip')).toBeCloseTo(1, 10);
    // No own price for dall-e-3: ModelPrice × vip's ratio, as billing charges it.
    expect(entryOf(body.data, 'dall-e-3')).toMatchObject({ quota_type: 1, model_price: 0.04 });
    expect(shown(body, 'dall-e-3', 'vip')).toBeCloseTo(0.032, 10);
  });

  it('leaves a default-group caller and a visitor on the prices without groups', async () => {
    for (const body of [(await plain.get('/api/pricing')).json(), (await root.get('/api/pricing')).json()]) {
      expect(body.group_ratio).toEqual({ default: 1, vip: 0.8 });
      expect(entryOf(body.data, 'gpt-4o')).toMatchObject({
        quota_type: 0,
        model_ratio: 1.25,
        completion_ratio: 4,
      });
      expect(entryOf(body.data, 'gpt-3.5-turbo')).toMatchObject({ quota_type: 0, model_ratio: 0.25 });
      expect(entryOf(body.data, 'dall-e-3')).toMatchObject({ quota_type: 1, model_price: 0.04 });
      expect(entryOf(body.data, 'vip-only-model')).toBeUndefined();
    }
    const visitor = (await t.app.inject({ method: 'GET', url: '/api/pricing' })).json();
    expect(entryOf(visitor.data, 'gpt-4o')).toMatchObject({ model_ratio: 1.25, completion_ratio: 4 });
    expect(entryOf(visitor.data, 'vip-only-model')).toBeUndefined();
  });

  it('answers a free group (ratio 0) with its own prices as ratio 1 and everything else at 0', async () => {
    await set('GroupRatio', { default: 1, vip: 0 });
    const body = (await vip.get('/api/pricing')).json();
    expect(body.group_ratio).toEqual({ default: 1, vip: 1 });
    expect(shown(body, 'gpt-4o', 'vip')).toBe(4);
    expect(shown(body, 'gpt-3.5-turbo', 'vip')).toBe(0.01);
    expect(shown(body, 'dall-e-3', 'vip')).toBe(0);
    // The default group's view of a model vip does not price itself is unchanged.
    expect((await plain.get('/api/pricing')).json().group_ratio).toEqual({ default: 1, vip: 0 });
  });
});

/**
 * The prices issue 39 adds to a row, as the providers publish them:
 * - Claude Sonnet 4.5 (https://docs.anthropic.com/en/docs/about-claude/pricing): $3 input, $15 output, $3.75 a
 *   5-minute cache write, $6 a 1-hour one, $0.30 a cache read per million; above 200K prompt tokens $6 / $22.50,
 *   cache writes and reads twice theirs; web search $10 per 1,000 searches.
 * - GPT-5 (https://platform.openai.com/docs/pricing): $1.25 / $10, cached $0.125; priority $2.50 / $20, flex
 *   $0.625 / $5.
 * - Gemini 2.5 Pro (https://ai.google.dev/gemini-api/docs/pricing): $1.25 / $10 up to 200K prompt tokens, $2.50 /
 *   $15 above.
 * The options hold them as an operator would write them from those pages.
 */
describe('pricing page: cache, long-context, service-tier and fee prices', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let vip: ConsoleClient;
  const set = async (key: string, value: unknown) =>
    expect((await root.put('/api/option/', { key, value: JSON.stringify(value) })).json().success).toBe(true);
  const rowOf = async (client: ConsoleClient | undefined, model: string) => {
    const body = client
      ? (await client.get('/api/pricing')).json()
      : (await t.app.inject({ method: 'GET', url: '/api/pricing' })).json();
    return (body.data as Entry[]).find((e) => e.model_name === model);
  };

  beforeAll(async () => {
    ({ t, root, vip } = await appServingVip(
      ['claude-sonnet-4-5', 'gpt-5', 'gemini-2.5-pro', 'dall-e-3'],
      'vince',
    ));
    await set('ModelRatio', { 'claude-sonnet-4-5': 1.5, 'gpt-5': 0.625, 'gemini-2.5-pro': 0.625 });
    await set('CompletionRatio', { 'claude-sonnet-4-5': 5, 'gpt-5': 8, 'gemini-2.5-pro': 8 });
    await set('CacheRatio', { 'claude-sonnet-4-5': 0.1, 'gpt-5': 0.1 });
    await set('LongContextTiers', {
      'claude-sonnet-4*': [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
      'gemini-2.5-pro': [{ above: 200000, input: 2, output: 1.5 }],
    });
    await set('ServiceTierRatio', { 'gpt-5': { priority: 2, flex: 0.5 } });
    await set('RequestFees', { 'claude-sonnet-4-5': { web_search: 0.01 }, 'dall-e-3': { image: 0.04 } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('adds cache reads, both cache writes, the tier and the web-search fee to a Claude row', async () => {
    expect(await rowOf(undefined, 'claude-sonnet-4-5')).toEqual({
      model_name: 'claude-sonnet-4-5',
      quota_type: 0,
      model_ratio: 1.5,
      model_price: 0,
      completion_ratio: 5,
      enable_groups: ['default', 'vip'],
      cache_ratio: 0.1,
      create_cache_ratio: 1.25,
      create_cache_1h_ratio: 2,
      long_context_tiers: [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
      request_fees: { web_search: 0.01 },
    });
  });

  it('adds service tiers to GPT-5 and no cache writes (OpenAI bills none)', async () => {
    const row = await rowOf(undefined, 'gpt-5');
    expect(row).toMatchObject({ cache_ratio: 0.1, service_tier_ratio: { priority: 2, flex: 0.5 } });
    expect(row).not.toHaveProperty('create_cache_ratio');
    expect(row).not.toHaveProperty('long_context_tiers');
  });

  it("fills a tier's cache multiplier with its input one, and leaves out a cache price the model has not", async () => {
    const row = await rowOf(undefined, 'gemini-2.5-pro');
    expect(row).toMatchObject({ long_context_tiers: [{ above: 200000, input: 2, output: 1.5, cache: 2 }] });
    expect(row).not.toHaveProperty('cache_ratio');
  });

  it('adds an image fee to a per-call model', async () => {
    expect(await rowOf(undefined, 'dall-e-3')).toMatchObject({
      quota_type: 1,
      request_fees: { image: 0.04 },
    });
  });

  it("shows a group that pays its own price the fee it pays: fee × group_ratio is the group's fee", async () => {
    await set('GroupRatio', { default: 1, vip: 0.5 });
    await set('GroupModelRatio', { vip: { 'claude-sonnet-4-5': 1.5 } });
    const body = (await vip.get('/api/pricing')).json();
    const row = (body.data as Entry[]).find((e) => e.model_name === 'claude-sonnet-4-5') as Entry & {
      request_fees: { web_search: number };
    };
    // vip pays its own $3 input and the fee of $0.01 a search without its 0.5 ratio.
    expect(body.group_ratio.vip).toBe(0.5);
    expect(row.model_ratio * body.group_ratio.vip * 2).toBe(3);
    expect(row.request_fees.web_search * body.group_ratio.vip).toBe(0.01);
    // dall-e-3 has no own price: its fee is halved like its price.
    const image = (body.data as (Entry & { request_fees: { image: number } })[]).find(
      (e) => e.model_name === 'dall-e-3',
    );
    expect(image!.request_fees.image * body.group_ratio.vip).toBe(0.02);
  });
});

describe('which models take the batch price', () => {
  let t: TestApp;
  let root: ConsoleClient;

  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('marks a model a channel with a Batch API serves (OpenAI, Anthropic), not one only another provider serves', async () => {
    const { db } = t.runtime.deps;
    // The gateway sends batches through OpenAI's (type 1) and Anthropic's (14) Batch APIs at their batch price; a
    // Gemini (24) channel's lines it runs itself, at the normal price (docs/adr/0050).
    const [openai, anthropic, gemini] = await db
      .insert(channels)
      .values([
        { name: 'openai', type: 1, key: 'sk-a' },
        { name: 'anthropic', type: 14, key: 'sk-b' },
        { name: 'gemini', type: 24, key: 'sk-c' },
      ])
      .returning({ id: channels.id });
    await db.insert(abilities).values([
      { group: 'default', model: 'gpt-4o', channelId: openai!.id },
      { group: 'default', model: 'claude-sonnet-4-5', channelId: anthropic!.id },
      { group: 'default', model: 'gemini-2.5-pro', channelId: gemini!.id },
      { group: 'default', model: 'gemini-2.5-pro', channelId: openai!.id, enabled: false },
    ]);
    const saved = await root.put('/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ 'gpt-4o': 1.25, 'claude-sonnet-4-5': 1.5, 'gemini-2.5-pro': 0.625 }),
    });
    expect(saved.json()).toMatchObject({ success: true });
    const rows = (await t.app.inject({ method: 'GET', url: '/api/pricing' })).json().data as (Entry & {
      batch_price?: boolean;
    })[];
    const batchOf = (model: string) => rows.find((row) => row.model_name === model)?.batch_price;
    expect(batchOf('gpt-4o')).toBe(true);
    expect(batchOf('claude-sonnet-4-5')).toBe(true);
    // Only a disabled OpenAI ability beside the Gemini channel: no batch price.
    expect(batchOf('gemini-2.5-pro')).toBeUndefined();
    expect(rows.find((row) => row.model_name === 'gemini-2.5-pro')?.enable_groups).toEqual(['default']);
  });
});

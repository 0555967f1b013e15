/**
 * The price shapes of 2026 through `/api/option/`: long-context tiers, service tiers and per-request fees are saved
 * and served like the other price maps, a bad value is refused with the option registry's words and changes
 * nothing, and the numbers a ModelPrice owns stay Git's while the console edits the rest of the same map.
 *
 * Figures: Claude Sonnet 4.5 above 200k prompt tokens costs $6 / $22.50 beside $3 / $15
 * (https://docs.anthropic.com/en/docs/about-claude/pricing), × 2 and × 1.5; GPT-5's priority tier $2.50 / $20
 * beside $1.25 / $10, × 2, and flex × 0.5 (https://platform.openai.com/docs/pricing); web search $10 per 1,000
 * searches at Anthropic, $0.01 each.
 */
import { createManagedOptionWriter } from '@turnpike/core/options/managed-options';
import { waitFor } from '@turnpike/core/testing/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

let t: TestApp;
let root: ConsoleClient;
beforeAll(async () => {
  t = await createTestApp();
  root = await setupRoot(t.app);
});
afterAll(async () => {
  await t?.close();
});

const listed = async () => (await root.get('/api/option/')).json().data as { key: string; value: string }[];
const save = (key: string, value: unknown) =>
  root.put('/api/option/', { key, value: typeof value === 'string' ? value : JSON.stringify(value) });

describe('price shapes in /api/option/', () => {
  it('saves long-context tiers, service tiers and fees and serves them at once', async () => {
    const tiers = { 'claude-sonnet-4-5': [{ above: 200000, input: 2, output: 1.5 }] };
    const serviceTiers = { 'gpt-5*': { priority: 2, flex: 0.5 } };
    const fees = { 'claude-sonnet-4-5': { web_search: 0.01 } };
    for (const [key, value] of [
      ['LongContextTiers', tiers],
      ['ServiceTierRatio', serviceTiers],
      ['RequestFees', fees],
    ] as const)
      expect((await save(key, value)).json()).toMatchObject({ success: true });
    expect(t.runtime.deps.options.get('LongContextTiers')).toEqual(tiers);
    expect(t.runtime.deps.options.get('ServiceTierRatio')).toEqual(serviceTiers);
    expect(t.runtime.deps.options.get('RequestFees')).toEqual(fees);
    const texts = await listed();
    expect(JSON.parse(texts.find((o) => o.key === 'RequestFees')!.value)).toEqual(fees);
  });

  it.each([
    ['LongContextTiers', { m: [{ above: 200000, input: 0, output: 1.5 }] }, 'must be more than 0'],
    [
      'LongContextTiers',
      {
        m: [
          { above: 200000, input: 2, output: 1.5 },
          { above: 200000, input: 3, output: 2 },
        ],
      },
      'two tiers start at the same number of tokens',
    ],
    ['LongContextTiers', { m: [{ above: 200000.5, input: 2, output: 1.5 }] }, 'must be a whole number'],
    ['LongContextTiers', { m: [{ above: 200000, input: 2 }] }, 'must be a number'],
    ['LongContextTiers', { m: [] }, 'list at least one tier'],
    ['ServiceTierRatio', { 'gpt-5': { Priority: 2 } }, 'a service tier is lower-case letters'],
    ['ServiceTierRatio', { 'gpt-5': { flex: -0.5 } }, 'must not be negative'],
    ['RequestFees', { m: { web_search: -0.01 } }, 'must not be negative'],
    ['RequestFees', { m: { video: 1 } }, 'Unrecognized key'],
    ['RequestFees', '{"m":', 'the text is not valid JSON'],
  ])('refuses %s %j with the registry’s message and changes nothing', async (key, value, message) => {
    const before = await listed();
    const served = t.runtime.deps.options.get(key as 'RequestFees');
    const refused = await save(key, value);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ success: false });
    expect(refused.json().message).toContain(`${key} must be a JSON object`);
    expect(refused.json().message).toContain(message);
    expect(await listed()).toEqual(before);
    expect(t.runtime.deps.options.get(key as 'RequestFees')).toBe(served);
  });
});

describe('price-shape numbers a ModelPrice owns', () => {
  const source = { kind: 'ModelPrice', namespace: 'team-a', name: 'sonnet', generation: 1 } as const;
  const sonnet = [
    { key: 'LongContextTiers', entry: 'claude-sonnet-4-5/200000/input', number: 2 },
    { key: 'LongContextTiers', entry: 'claude-sonnet-4-5/200000/output', number: 1.5 },
    { key: 'LongContextTiers', entry: 'claude-sonnet-4-5/200000/cache', number: 2 },
    { key: 'RequestFees', entry: 'claude-sonnet-4-5/web_search', number: 0.01 },
  ] as const;

  it('are served over the console’s map, refused to the console, and the rest of the map stays editable', async () => {
    const managed = createManagedOptionWriter({ db: t.runtime.deps.db, bus: t.runtime.deps.bus });
    await save('LongContextTiers', { 'gemini-2.5-pro': [{ above: 200000, input: 2, output: 1.5 }] });
    expect((await managed.apply({ source, values: [...sonnet] })).ok).toBe(true);
    const served = () => t.runtime.deps.options.get('LongContextTiers');
    await waitFor(() => (served()['claude-sonnet-4-5'] ? true : undefined));
    expect(served()).toEqual({
      'gemini-2.5-pro': [{ above: 200000, input: 2, output: 1.5 }],
      'claude-sonnet-4-5': [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
    });

    // Changing an owned multiplier is Git's business.
    const changed = structuredClone(served()) as Record<string, { above: number; output: number }[]>;
    changed['claude-sonnet-4-5']![0]!.output = 1;
    const refused = await save('LongContextTiers', changed);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('claude-sonnet-4-5/200000/output');
    expect(refused.json().message).toContain('ModelPrice team-a/sonnet');

    // A tier of its own beside the owned one, and another model's tier, are the console's.
    const added = {
      ...served(),
      'claude-sonnet-4-5': [...served()['claude-sonnet-4-5']!, { above: 500000, input: 3, output: 2 }],
      'gemini-2.5-pro': [{ above: 200000, input: 2, output: 1.6 }],
    };
    expect((await save('LongContextTiers', added)).json()).toMatchObject({ success: true });
    expect(served()['claude-sonnet-4-5']).toEqual([
      { above: 200000, input: 2, output: 1.5, cache: 2 },
      { above: 500000, input: 3, output: 2 },
    ]);

    // The resource goes: its tier goes with it, the console's stay.
    expect((await managed.apply({ source, values: undefined })).ok).toBe(true);
    await waitFor(() => (served()['claude-sonnet-4-5']?.length === 1 ? true : undefined));
    expect(served()).toEqual({
      'claude-sonnet-4-5': [{ above: 500000, input: 3, output: 2 }],
      'gemini-2.5-pro': [{ above: 200000, input: 2, output: 1.6 }],
    });
    expect(t.runtime.deps.options.get('RequestFees')['claude-sonnet-4-5']).toEqual({ web_search: 0.01 });
  });

  it('refuses numbers that make no whole tier, in the registry’s words, writing nothing', async () => {
    const managed = createManagedOptionWriter({ db: t.runtime.deps.db, bus: t.runtime.deps.bus });
    const before = t.runtime.deps.options.get('LongContextTiers');
    const refused = await managed.apply({
      source: { ...source, name: 'half-tier' },
      values: [{ key: 'LongContextTiers', entry: 'half/200000/input', number: 2 }],
    });
    expect(refused).toMatchObject({ ok: false, reason: 'InvalidOption' });
    expect(!refused.ok && refused.message).toContain('LongContextTiers must be a JSON object');
    expect(await managed.owned({ ...source, name: 'half-tier' })).toEqual([]);
    expect(t.runtime.deps.options.get('LongContextTiers')).toBe(before);
    expect(
      await managed.apply({
        source: { ...source, name: 'bad-tier' },
        values: [{ key: 'ServiceTierRatio', entry: 'gpt-5/Priority', number: 2 }],
      }),
    ).toMatchObject({
      ok: false,
      message: expect.stringContaining('ServiceTierRatio[gpt-5/Priority] must name'),
    });
  });
});

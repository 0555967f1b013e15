import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { PricingEntry } from '../api/pricing.ts';
import { computePrice, filterPricing, formatPrice, initialGroup, sortPricing } from '../rules.ts';
import { PricingPage } from './pricing-page.tsx';

const perToken = (model_name: string, model_ratio: number, completion_ratio: number, groups: string[]) =>
  ({
    model_name,
    quota_type: 0,
    model_ratio,
    model_price: 0,
    completion_ratio,
    enable_groups: groups,
  }) satisfies PricingEntry;
const perCall = (model_name: string, model_price: number, groups: string[]) =>
  ({
    model_name,
    quota_type: 1,
    model_ratio: 0,
    model_price,
    completion_ratio: 0,
    enable_groups: groups,
  }) satisfies PricingEntry;

const gpt4o = perToken('gpt-4o', 1.25, 4, ['default', 'vip']);
const claude = perToken('claude-3-5-sonnet', 1.5, 5, ['vip']);
const dalle = perCall('dall-e-3', 0.04, ['default']);
const mini = perToken('gpt-4o-mini', 0.075, 4, []);

const dollars = { quotaPerUnit: 500000, inCurrency: true };

function serve({
  groupRatio = { default: 1, vip: 2 },
  models = [dalle, claude, gpt4o, mini],
  fail = false,
}: {
  groupRatio?: Record<string, number>;
  models?: PricingEntry[];
  fail?: boolean;
} = {}) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
    'GET /api/pricing': () =>
      fail
        ? { status: 500, body: { success: false, message: 'boom' } }
        : {
            body: {
              success: true,
              message: '',
              data: models,
              group_ratio: groupRatio,
              usable_group: Object.fromEntries(Object.keys(groupRatio).map((g) => [g, `${g} desc`])),
            },
          },
  });
}

/** The table row of a model, found by its copy button. */
const rowOf = (model: string) => {
  const row = screen.getByRole('button', { name: model }).closest('tr');
  if (!row) throw new Error(`no row for ${model}`);
  return within(row);
};

describe('pricing rules', () => {
  it('prices per-token models per 1M tokens as ratio × 2 × group ratio, output times the completion ratio', () => {
    expect(computePrice(gpt4o, 1, dollars)).toEqual({ type: 'per-token', input: 2.5, output: 10 });
    expect(computePrice(gpt4o, 1.5, dollars)).toEqual({ type: 'per-token', input: 3.75, output: 15 });
    // a different QuotaPerUnit changes what a quota unit is worth
    expect(computePrice(gpt4o, 1, { quotaPerUnit: 1_000_000, inCurrency: true })).toEqual({
      type: 'per-token',
      input: 1.25,
      output: 5,
    });
    // without currency display the same price is shown in quota units
    expect(computePrice(gpt4o, 1, { quotaPerUnit: 500000, inCurrency: false })).toEqual({
      type: 'per-token',
      input: 1_250_000,
      output: 5_000_000,
    });
  });

  it('prices per-call models as model price × group ratio', () => {
    expect(computePrice(dalle, 2, dollars)).toEqual({ type: 'per-call', perCall: 0.08 });
    expect(computePrice(dalle, 2, { quotaPerUnit: 500000, inCurrency: false })).toEqual({
      type: 'per-call',
      perCall: 40000,
    });
  });

  it('prints prices without float noise', () => {
    expect(formatPrice(0.075 * 2 * 3, true)).toBe('$0.45');
    expect(formatPrice(0.1 + 0.2, true)).toBe('$0.3');
    expect(formatPrice(1_250_000.4, false)).toBe('1,250,000');
  });

  it('sorts per-token before per-call, gpt models first, then by name', () => {
    const shuffled = [dalle, perCall('gpt-image', 0.1, []), claude, mini, perToken('ada', 1, 1, []), gpt4o];
    expect(sortPricing(shuffled).map((e) => e.model_name)).toEqual([
      'gpt-4o',
      'gpt-4o-mini',
      'ada',
      'claude-3-5-sonnet',
      'gpt-image',
      'dall-e-3',
    ]);
  });

  it('searches model names case-insensitively by contains', () => {
    const all = [gpt4o, claude, dalle, mini];
    expect(filterPricing(all, '4O-M').map((e) => e.model_name)).toEqual(['gpt-4o-mini']);
    expect(filterPricing(all, 'SONNET').map((e) => e.model_name)).toEqual(['claude-3-5-sonnet']);
    expect(filterPricing(all, '  ')).toHaveLength(4);
    expect(filterPricing(all, 'llama')).toEqual([]);
  });

  it("views the user's group, else the default group, else the first offered", () => {
    expect(initialGroup({ default: 1, svip: 0.8 }, 'svip')).toBe('svip');
    expect(initialGroup({ default: 1, vip: 2 }, 'gone')).toBe('default');
    expect(initialGroup({ vip: 2 })).toBe('vip');
  });
});

describe('pricing page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows a visitor the default group prices in the spec order, with a sign-in warning', async () => {
    serve();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    expect(
      await screen.findByText(/You are not signed in: prices are shown with the default group's ratio \(1\)/),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Sign in to see your group' }).getAttribute('href')).toBe(
      '/login',
    );
    expect(screen.getByText(/Pay-as-you-go cost = group ratio × model ratio/)).toBeTruthy();
    const names = screen.getAllByRole('button', { name: /^(gpt|claude|dall)/ }).map((b) => b.textContent);
    expect(names).toEqual(['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'dall-e-3']);
    expect(rowOf('gpt-4o').getByText('Input $2.5 / 1M tokens')).toBeTruthy();
    expect(rowOf('gpt-4o').getByText('Output $10 / 1M tokens')).toBeTruthy();
    expect(rowOf('dall-e-3').getByText('$0.04 per call')).toBeTruthy();
    expect(rowOf('dall-e-3').getByText('Per call')).toBeTruthy();
    expect(rowOf('gpt-4o').getByText('Per token')).toBeTruthy();
    // availability in the viewed (default) group
    expect(rowOf('gpt-4o').getByText('Group default can use this model')).toBeTruthy();
    expect(rowOf('claude-3-5-sonnet').getByText('Group default cannot use this model')).toBeTruthy();
    expect(rowOf('gpt-4o-mini').getByText('Not offered to any group you can use')).toBeTruthy();
  });

  it("starts a signed-in user on their own group's ratio", async () => {
    setSessionUser({ id: 5, username: 'sam', display_name: 'Sam', role: 1, status: 1, group: 'svip' });
    serve({ groupRatio: { default: 1, vip: 2, svip: 0.8 } });
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    expect(await screen.findByText(/Your group is svip, with a group ratio of 0.8/)).toBeTruthy();
    expect((screen.getByLabelText('Viewed group') as HTMLSelectElement).value).toBe('svip');
    expect(rowOf('gpt-4o').getByText('Input $2 / 1M tokens')).toBeTruthy();
    expect(screen.queryByText('Sign in to see your group')).toBeNull();
  });

  it('recomputes prices and availability when the viewed group changes', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByText('Input $2.5 / 1M tokens');
    await user.selectOptions(screen.getByLabelText('Viewed group'), 'vip');
    expect(await screen.findByText('Now viewing group vip, ratio 2')).toBeTruthy();
    expect(rowOf('gpt-4o').getByText('Input $5 / 1M tokens')).toBeTruthy();
    expect(rowOf('gpt-4o').getByText('Group ratio: 2')).toBeTruthy();
    expect(rowOf('dall-e-3').getByText('$0.08 per call')).toBeTruthy();
    expect(rowOf('claude-3-5-sonnet').getByText('Group vip can use this model')).toBeTruthy();
    expect(rowOf('dall-e-3').getByText('Group vip cannot use this model')).toBeTruthy();

    // clicking a group tag in a row switches back
    await user.click(rowOf('dall-e-3').getByRole('button', { name: 'default' }));
    expect(await screen.findByText('Now viewing group default, ratio 1')).toBeTruthy();
    expect(rowOf('dall-e-3').getByText('$0.04 per call')).toBeTruthy();
    expect((screen.getByLabelText('Viewed group') as HTMLSelectElement).value).toBe('default');
  });

  it('filters by the search and says when nothing matches', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByText('dall-e-3');
    await user.type(screen.getByLabelText('Search models'), 'GPT-4O');
    expect(screen.getByRole('button', { name: 'gpt-4o' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'gpt-4o-mini' })).toBeTruthy();
    expect(screen.queryByText('dall-e-3')).toBeNull();
    expect(screen.queryByText('claude-3-5-sonnet')).toBeNull();
    await user.clear(screen.getByLabelText('Search models'));
    await user.type(screen.getByLabelText('Search models'), 'llama');
    expect(screen.getByText('No model matches the search')).toBeTruthy();
  });

  it('copies the selected model names, and one name by clicking it', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByText('dall-e-3');
    const copySelected = screen.getByRole('button', { name: 'Copy selected models' });
    expect((copySelected as HTMLButtonElement).disabled).toBe(true);
    await user.click(screen.getByLabelText('Select dall-e-3'));
    await user.click(screen.getByLabelText('Select gpt-4o'));
    await user.click(screen.getByRole('button', { name: 'Copy 2 selected models' }));
    // in table order, whatever order they were picked in
    expect(await navigator.clipboard.readText()).toBe('gpt-4o,dall-e-3');
    expect(await screen.findByText('Copied to the clipboard')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'claude-3-5-sonnet' }));
    expect(await navigator.clipboard.readText()).toBe('claude-3-5-sonnet');

    // "select all" takes the rows the search shows
    await user.type(screen.getByLabelText('Search models'), 'mini');
    await user.click(screen.getByLabelText('Select all shown models'));
    await user.click(screen.getByRole('button', { name: 'Copy 3 selected models' }));
    expect(await navigator.clipboard.readText()).toBe('gpt-4o,gpt-4o-mini,dall-e-3');
  });

  it('explains the ratios on request', async () => {
    serve();
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByText('dall-e-3');
    await user.click(screen.getByRole('button', { name: 'What the ratios mean' }));
    const dialog = await screen.findByRole('dialog');
    expect(
      within(dialog).getByText(/Completion ratio: how many times an output token costs more/),
    ).toBeTruthy();
  });

  it('says when nothing is priced and keeps copying disabled', async () => {
    serve({ models: [] });
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    expect(await screen.findByText('No models are priced yet')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Copy selected models' }) as HTMLButtonElement).disabled).toBe(
      true,
    );
  });

  it('shows the failure with a retry button', async () => {
    const server = serve({ fail: true });
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    expect(await screen.findByText('Could not load the prices')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(server.callsTo('GET', '/api/pricing')).toHaveLength(2));
  });
});

/**
 * Rows as `/api/pricing` answers them, with the figures the providers publish, per million tokens:
 * - Claude Sonnet 4.5 (https://docs.anthropic.com/en/docs/about-claude/pricing): $3 input, $15 output, $0.30 cache
 *   hits, $3.75 5-minute and $6 1-hour cache writes; above 200K prompt tokens $6 / $22.50 and $0.60 cache hits; web
 *   search $10 per 1,000 searches.
 * - GPT-5 (https://platform.openai.com/docs/pricing): $1.25 / $10, $0.125 cached; priority $2.50 / $20, flex
 *   $0.625 / $5.
 * - Gemini 2.5 Flash and 2.5 Pro (https://ai.google.dev/gemini-api/docs/pricing): Flash $0.30 / $2.50, its
 *   completion ratio stored rounded (8.33333, as the built-in table holds it); Pro $1.25 / $10, above 200K prompt
 *   tokens $2.50 / $15.
 * - gpt-image-1 at OpenAI: $0.042 for a medium 1024×1024 image.
 */
const sonnet: PricingEntry = {
  ...perToken('claude-sonnet-4-5', 1.5, 5, ['default']),
  cache_ratio: 0.1,
  create_cache_ratio: 1.25,
  create_cache_1h_ratio: 2,
  long_context_tiers: [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
  request_fees: { web_search: 0.01 },
};
const gpt5: PricingEntry = {
  ...perToken('gpt-5', 0.625, 8, ['default']),
  cache_ratio: 0.1,
  service_tier_ratio: { priority: 2, flex: 0.5 },
};
const flash = perToken('gemini-2.5-flash', 0.15, 8.33333, ['default']);
const pro: PricingEntry = {
  ...perToken('gemini-2.5-pro', 0.625, 8, ['default']),
  long_context_tiers: [{ above: 200000, input: 2, output: 1.5, cache: 2 }],
};
const image: PricingEntry = { ...perCall('gpt-image-1', 0.042, ['default']), request_fees: { image: 0.042 } };

describe('prices as the providers publish them', () => {
  it('prints a ratio-made price to six significant digits, trailing zeros dropped', () => {
    // Gemini 2.5 Flash's output: 0.15 × 8.33333 × 2 = 2.499999, published as $2.50.
    const price = computePrice(flash, 1, dollars);
    expect(price.type === 'per-token' && formatPrice(price.output, true)).toBe('$2.5');
    expect(formatPrice(0.0000015, true)).toBe('$0.0000015');
    expect(formatPrice(75, true)).toBe('$75');
  });

  it('shows cache reads, both cache writes, the long-context tier and the web-search fee of Claude Sonnet 4.5', async () => {
    serve({ models: [sonnet] });
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByText('Input $3 / 1M tokens');
    const row = rowOf('claude-sonnet-4-5');
    for (const text of [
      'Output $15 / 1M tokens',
      'Cache read $0.3 / 1M tokens',
      'Cache write (5 min) $3.75 / 1M tokens',
      'Cache write (1 h) $6 / 1M tokens',
      'Above 200K tokens: $6 / $22.5, cache read $0.6',
      'Web search $10 / 1K searches',
    ])
      expect(row.getByText(text)).toBeTruthy();
  });

  it("shows GPT-5's priority and flex prices and Gemini 2.5 Flash's output as published", async () => {
    serve({ models: [gpt5, flash, pro] });
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByRole('button', { name: 'gpt-5' });
    const gpt = rowOf('gpt-5');
    expect(gpt.getByText('Input $1.25 / 1M tokens')).toBeTruthy();
    expect(gpt.getByText('Cache read $0.125 / 1M tokens')).toBeTruthy();
    expect(gpt.getByText('priority ×2: $2.5 / $20')).toBeTruthy();
    expect(gpt.getByText('flex ×0.5: $0.625 / $5')).toBeTruthy();
    expect(gpt.queryByText(/Cache write/)).toBeNull();
    expect(rowOf('gemini-2.5-flash').getByText('Output $2.5 / 1M tokens')).toBeTruthy();
    expect(rowOf('gemini-2.5-pro').getByText('Above 200K tokens: $2.5 / $15')).toBeTruthy();
  });

  it('shows a per-image fee beside a per-call price, and every extra price times the viewed group ratio', async () => {
    serve({ models: [image, sonnet], groupRatio: { default: 1, vip: 2 } });
    const user = userEvent.setup();
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    expect(await screen.findByText('Image $0.042 each')).toBeTruthy();
    await user.selectOptions(screen.getByLabelText('Viewed group'), 'vip');
    expect(await screen.findByText('Image $0.084 each')).toBeTruthy();
    const row = rowOf('claude-sonnet-4-5');
    expect(row.getByText('Cache write (1 h) $12 / 1M tokens')).toBeTruthy();
    expect(row.getByText('Above 200K tokens: $12 / $45, cache read $1.2')).toBeTruthy();
    expect(row.getByText('Web search $20 / 1K searches')).toBeTruthy();
  });

  it('marks a model whose batches take the batch price, and no other', async () => {
    serve({ models: [{ ...gpt5, batch_price: true }, flash] });
    await renderScreen(() => <PricingPage />, { path: '/pricing' });
    await screen.findByRole('button', { name: 'gpt-5' });
    expect(
      rowOf('gpt-5').getByTitle('Batches of this model (/v1/batches) are billed at the batch price'),
    ).toBeTruthy();
    expect(rowOf('gpt-5').getByText('Batch API')).toBeTruthy();
    expect(rowOf('gemini-2.5-flash').queryByText('Batch API')).toBeNull();
  });
});

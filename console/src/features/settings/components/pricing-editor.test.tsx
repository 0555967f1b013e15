import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, renderScreen, savedJsonOptions } from '../../../testing/render.tsx';
import { PricingEditor } from './pricing-editor.tsx';
import { UnsetModels } from './unset-models.tsx';

const values = {
  ModelPrice: '{"mj-imagine": 0.1}',
  ModelRatio: '{"gpt-4o": 1.25, "claude-3": 1.5}',
  CompletionRatio: '{"gpt-4o": 4}',
};

function serve() {
  return fakeServer({
    'PUT /api/option/': () => ({ body: { success: true } }),
    'GET /api/channel/models_enabled': () => ({
      body: { success: true, data: ['gpt-4o', 'mj-imagine', 'new-model', 'other-model'] },
    }),
  });
}

const dialog = () => within(screen.getByRole('dialog'));

describe('visual pricing editor', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows rows with the per-1M token price ($2 per ratio unit)', async () => {
    serve();
    await renderScreen(() => <PricingEditor values={values} />);
    const row = within(screen.getByText('gpt-4o').closest('tr') as HTMLElement);
    expect(row.getByText('$2.5 / $10')).toBeTruthy();
  });

  it('rejects a duplicate name, a zero price and non-numbers; a fixed price disables the ratios', async () => {
    const server = serve();
    await renderScreen(() => <PricingEditor values={values} />);
    await userEvent.click(screen.getByRole('button', { name: 'Add model' }));
    await userEvent.type(dialog().getByLabelText('Model name'), 'gpt-4o');
    await userEvent.type(dialog().getByLabelText('Model ratio'), '2');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe('Model name already exists');

    await userEvent.clear(dialog().getByLabelText('Model name'));
    await userEvent.type(dialog().getByLabelText('Model name'), 'dall-e');
    await userEvent.type(dialog().getByLabelText('Fixed price (per request)'), '0');
    expect((dialog().getByLabelText('Model ratio') as HTMLInputElement).disabled).toBe(true);
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe('Model price cannot be 0');
    await userEvent.clear(dialog().getByLabelText('Fixed price (per request)'));
    await userEvent.type(dialog().getByLabelText('Fixed price (per request)'), 'abc');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe('Please enter a number');

    await userEvent.clear(dialog().getByLabelText('Fixed price (per request)'));
    await userEvent.type(dialog().getByLabelText('Fixed price (per request)'), '0.04');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await userEvent.click(screen.getByRole('button', { name: 'Apply changes' }));
    await screen.findByText('Saved');
    // only the changed option is sent; the ratio was ignored for a fixed-price model
    const sent = server.callsTo('PUT', '/api/option/').map((c) => c.body as { key: string; value: string });
    expect(sent.map((s) => s.key)).toEqual(['ModelPrice']);
    expect(JSON.parse(sent[0]?.value ?? '{}')).toEqual({ 'mj-imagine': 0.1, 'dall-e': 0.04 });
  });

  it('batch set needs a selection and valid values', async () => {
    const server = serve();
    await renderScreen(() => <PricingEditor values={values} />);
    await userEvent.click(screen.getByRole('button', { name: 'Batch set' }));
    expect(await screen.findByText('Please select models to batch set first')).toBeTruthy();

    await userEvent.click(screen.getByLabelText('Select claude-3'));
    await userEvent.click(screen.getByRole('button', { name: 'Batch set' }));
    await userEvent.selectOptions(dialog().getByLabelText('Set'), 'both');
    await userEvent.type(dialog().getByLabelText('Value'), '2');
    await userEvent.click(dialog().getByRole('button', { name: 'Apply' }));
    expect(dialog().getByRole('alert').textContent).toBe('Enter the model ratio and the completion ratio');
    await userEvent.selectOptions(dialog().getByLabelText('Set'), 'ratio');
    await userEvent.clear(dialog().getByLabelText('Value'));
    await userEvent.click(dialog().getByRole('button', { name: 'Apply' }));
    expect(dialog().getByRole('alert').textContent).toBe('Enter the fill value');
    await userEvent.type(dialog().getByLabelText('Value'), 'x');
    await userEvent.click(dialog().getByRole('button', { name: 'Apply' }));
    expect(dialog().getByRole('alert').textContent).toBe('Enter a valid number');
    await userEvent.clear(dialog().getByLabelText('Value'));
    await userEvent.type(dialog().getByLabelText('Value'), '3');
    await userEvent.click(dialog().getByRole('button', { name: 'Apply' }));
    await userEvent.click(screen.getByRole('button', { name: 'Apply changes' }));
    await screen.findByText('Saved');
    const sent = server.callsTo('PUT', '/api/option/').map((c) => c.body as { key: string; value: string });
    expect(sent.map((s) => s.key)).toEqual(['ModelRatio']);
    expect(JSON.parse(sent[0]?.value ?? '{}')).toEqual({ 'gpt-4o': 1.25, 'claude-3': 3 });
  });

  it('marks a price a ModelPrice resource owns and keeps it read-only', async () => {
    fakeServer({
      'PUT /api/option/': () => ({ body: { success: true } }),
      'GET /api/option/owners': () => ({
        body: {
          success: true,
          data: [
            {
              key: 'ModelRatio',
              entry: 'gpt-4o',
              kind: 'ModelPrice',
              namespace: 'team-a',
              name: 'gpt-4o',
              generation: 2,
            },
          ],
        },
      }),
    });
    await renderScreen(() => <PricingEditor values={values} />);
    const owned = within(screen.getByText('gpt-4o').closest('tr') as HTMLElement);
    const badge = await owned.findByText('Managed by Kubernetes');
    expect(badge.getAttribute('title')).toMatch(/ModelPrice team-a\/gpt-4o, generation 2/);
    expect(owned.getByRole('button', { name: 'Edit' }).hasAttribute('disabled')).toBe(true);
    expect(owned.getByRole('button', { name: 'Delete' }).hasAttribute('disabled')).toBe(true);
    const free = within(screen.getByText('claude-3').closest('tr') as HTMLElement);
    expect(free.queryByText('Managed by Kubernetes')).toBeNull();
    expect(free.getByRole('button', { name: 'Delete' }).hasAttribute('disabled')).toBe(false);
  });

  it('marks a model whose cache-write price a ModelPrice owns, and not one only a group price of it is owned for', async () => {
    fakeServer({
      'GET /api/option/owners': () => ({
        body: {
          success: true,
          data: [
            {
              key: 'CreateCacheRatio',
              entry: 'claude-3',
              kind: 'ModelPrice',
              namespace: 'team-a',
              name: 'claude-cache',
              generation: 4,
            },
            {
              key: 'GroupModelRatio',
              entry: 'vip/gpt-4o',
              kind: 'ModelPrice',
              namespace: 'team-a',
              name: 'vip-prices',
              generation: 1,
            },
          ],
        },
      }),
    });
    await renderScreen(() => <PricingEditor values={values} />);
    const owned = within(screen.getByText('claude-3').closest('tr') as HTMLElement);
    const badge = await owned.findByText('Managed by Kubernetes');
    expect(badge.getAttribute('title')).toMatch(/ModelPrice team-a\/claude-cache, generation 4/);
    expect(owned.getByRole('button', { name: 'Edit' }).hasAttribute('disabled')).toBe(true);
    expect(owned.getByLabelText('Select claude-3').hasAttribute('disabled')).toBe(true);
    // gpt-4o's price without groups is still the console's: vip's own price is shown with the group maps.
    const free = within(screen.getByText('gpt-4o').closest('tr') as HTMLElement);
    expect(free.queryByText('Managed by Kubernetes')).toBeNull();
    expect(free.getByRole('button', { name: 'Edit' }).hasAttribute('disabled')).toBe(false);
  });

  /**
   * Claude Sonnet 4.5 (https://docs.anthropic.com/en/docs/about-claude/pricing): $3 / $15 per million (ratio 1.5,
   * completion 5), above 200K prompt tokens $6 / $22.50; web search $10 per 1,000 searches, $0.01 each. GPT-5's
   * priority tier (https://platform.openai.com/docs/pricing): $2.50 / $20 beside $1.25 / $10, × 2.
   */
  const shaped = {
    ModelPrice: '{}',
    ModelRatio: '{"claude-sonnet-4-5": 1.5, "gpt-5": 0.625}',
    CompletionRatio: '{"claude-sonnet-4-5": 5, "gpt-5": 8}',
    LongContextTiers: '{"gemini-2.5-pro*": [{"above": 200000, "input": 2, "output": 1.5}]}',
    ServiceTierRatio: '{"gpt-5": {"flex": 0.5}}',
    RequestFees: '{}',
  };
  const rowOf = (name: string) => within(screen.getByText(name).closest('tr') as HTMLElement);

  it("edits a model's long-context tier, service tier and web-search fee, showing the tier's USD beside it", async () => {
    const server = serve();
    await renderScreen(() => <PricingEditor values={shaped} />);
    expect(rowOf('gpt-5').getByText('flex ×0.5')).toBeTruthy();
    await userEvent.click(rowOf('claude-sonnet-4-5').getByRole('button', { name: 'Edit' }));
    await userEvent.click(dialog().getByRole('button', { name: 'Add a long-context tier' }));
    await userEvent.type(dialog().getByLabelText('Tier 1: above (prompt tokens)'), '200000');
    await userEvent.type(dialog().getByLabelText('Tier 1: input ×'), '2');
    await userEvent.type(dialog().getByLabelText('Tier 1: output ×'), '1.5');
    expect(dialog().getByText('= $6 / $22.5 per 1M tokens')).toBeTruthy();
    await userEvent.type(dialog().getByLabelText('Web search (USD per search)'), '0.01');
    expect(dialog().getByText('$10 per 1,000 searches')).toBeTruthy();
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(rowOf('claude-sonnet-4-5').getByText('above 200K ×2 / ×1.5')).toBeTruthy();
    expect(rowOf('claude-sonnet-4-5').getByText('web search $0.01 each')).toBeTruthy();

    await userEvent.click(rowOf('gpt-5').getByRole('button', { name: 'Edit' }));
    await userEvent.click(dialog().getByRole('button', { name: 'Add a service tier' }));
    await userEvent.type(dialog().getByLabelText('Service tier 2'), 'priority');
    await userEvent.type(dialog().getByLabelText('Service tier 2: multiplier'), '2');
    expect(dialog().getByText('= $2.5 / $20 per 1M tokens')).toBeTruthy();
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await userEvent.click(screen.getByRole('button', { name: 'Apply changes' }));
    await screen.findByText('Saved');
    const sent = savedJsonOptions(server);
    // Only the shape maps changed; the prefix entry no row shows is kept.
    expect(sent).toEqual({
      LongContextTiers: {
        'gemini-2.5-pro*': [{ above: 200000, input: 2, output: 1.5 }],
        'claude-sonnet-4-5': [{ above: 200000, input: 2, output: 1.5 }],
      },
      ServiceTierRatio: { 'gpt-5': { flex: 0.5, priority: 2 } },
      RequestFees: { 'claude-sonnet-4-5': { web_search: 0.01 } },
    });
  });

  it("refuses a tier the option registry would refuse, in the registry's words, and changes nothing", async () => {
    const server = serve();
    await renderScreen(() => <PricingEditor values={shaped} />);
    await userEvent.click(rowOf('claude-sonnet-4-5').getByRole('button', { name: 'Edit' }));
    await userEvent.click(dialog().getByRole('button', { name: 'Add a long-context tier' }));
    await userEvent.type(dialog().getByLabelText('Tier 1: above (prompt tokens)'), '200000');
    await userEvent.type(dialog().getByLabelText('Tier 1: input ×'), '0');
    await userEvent.type(dialog().getByLabelText('Tier 1: output ×'), '1.5');
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toMatch(
      /^LongContextTiers must be a JSON object .* \(at "claude-sonnet-4-5"\[0\]"input": must be more than 0\)$/,
    );
    await userEvent.clear(dialog().getByLabelText('Tier 1: output ×'));
    await userEvent.click(dialog().getByRole('button', { name: 'Confirm' }));
    expect(dialog().getByRole('alert').textContent).toBe(
      'A long-context tier needs its threshold, input and output multipliers',
    );
    await userEvent.click(dialog().getByRole('button', { name: 'Cancel' }));
    await userEvent.click(screen.getByRole('button', { name: 'Apply changes' }));
    expect(await screen.findByText('You seem not to have changed anything')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('keeps a model read-only when a ModelPrice owns one of its tiers', async () => {
    fakeServer({
      'GET /api/option/owners': () => ({
        body: {
          success: true,
          data: [
            {
              key: 'ServiceTierRatio',
              entry: 'gpt-5/flex',
              kind: 'ModelPrice',
              namespace: 'team-a',
              name: 'gpt-5',
              generation: 1,
            },
          ],
        },
      }),
    });
    await renderScreen(() => <PricingEditor values={shaped} />);
    expect(await rowOf('gpt-5').findByText('Managed by Kubernetes')).toBeTruthy();
    expect(rowOf('gpt-5').getByRole('button', { name: 'Edit' }).hasAttribute('disabled')).toBe(true);
    expect(rowOf('claude-sonnet-4-5').queryByText('Managed by Kubernetes')).toBeNull();
  });

  it('says nothing changed when saved untouched', async () => {
    const server = serve();
    await renderScreen(() => <PricingEditor values={values} />);
    await userEvent.click(screen.getByRole('button', { name: 'Apply changes' }));
    expect(await screen.findByText('You seem not to have changed anything')).toBeTruthy();
    expect(server.callsTo('PUT', '/api/option/')).toHaveLength(0);
  });

  it('lists enabled models that have neither a ratio nor a price', async () => {
    serve();
    await renderScreen(() => <UnsetModels values={values} />);
    await screen.findByText('new-model');
    expect(screen.getByText('other-model')).toBeTruthy();
    expect(screen.queryByText('gpt-4o')).toBeNull();
    expect(screen.queryByText('mj-imagine')).toBeNull();
  });
});

import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, renderScreen } from '../../../testing/render.tsx';
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

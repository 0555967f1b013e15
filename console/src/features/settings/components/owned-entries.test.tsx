import { screen, within } from '@testing-library/react';
import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, renderScreen } from '../../../testing/render.tsx';
import { OperationSettings } from './operation-settings.tsx';

const values: Record<string, string> = {
  ModelPrice: '{}',
  ModelRatio: '{"gpt-4o": 1.25}',
  CompletionRatio: '{"gpt-4o": 4}',
  CacheRatio: '{}',
  CreateCacheRatio: '{"claude-3": 1.25}',
  GroupModelPrice: '{"vip": {"gpt-4o": 0.01}}',
  GroupModelRatio: '{"vip": {"claude-3": 0.5}, "svip": {"claude-3": 0.4}}',
  GroupCompletionRatio: '{}',
  GroupCacheRatio: '{}',
  GroupCreateCacheRatio: '{}',
  GroupRatio: '{"default": 1}',
  UserUsableGroups: '{"default": "Default group"}',
};

const owner = (key: string, entry: string, name: string) => ({
  key,
  entry,
  kind: 'ModelPrice',
  namespace: 'team-a',
  name,
  generation: 1,
});

function serve() {
  return fakeServer({
    'GET /api/option/owners': () => ({
      body: {
        success: true,
        data: [
          owner('CreateCacheRatio', 'claude-3', 'claude'),
          owner('GroupModelPrice', 'vip/gpt-4o', 'vip-prices'),
          owner('GroupModelRatio', 'vip/claude-3', 'vip-prices'),
          owner('GroupModelRatio', 'svip/claude-3', 'svip-prices'),
        ],
      },
    }),
  });
}

describe('price map fields', () => {
  beforeEach(() =>
    setSessionUser({ id: 1, username: 'root', display_name: 'Root', role: 100, status: 1, group: 'default' }),
  );
  afterEach(async () => {
    vi.unstubAllGlobals();
    await i18next.changeLanguage('en');
  });

  it('name the entries Kubernetes owns in the cache-write and group maps, with their resources', async () => {
    serve();
    await renderScreen(() => <OperationSettings values={values} />);
    const cacheWrite = within(
      await screen.findByRole('note', { name: 'Price entries managed by Kubernetes in CreateCacheRatio' }),
    );
    expect(cacheWrite.getByText('Managed by Kubernetes')).toBeTruthy();
    expect(cacheWrite.getByText('claude-3 (ModelPrice team-a/claude)')).toBeTruthy();
    const groupPrice = within(
      screen.getByRole('note', { name: 'Price entries managed by Kubernetes in GroupModelPrice' }),
    );
    expect(groupPrice.getByText('vip/gpt-4o (ModelPrice team-a/vip-prices)')).toBeTruthy();
    const groupRatio = within(
      screen.getByRole('note', { name: 'Price entries managed by Kubernetes in GroupModelRatio' }),
    );
    expect(groupRatio.getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'svip/claude-3 (ModelPrice team-a/svip-prices)',
      'vip/claude-3 (ModelPrice team-a/vip-prices)',
    ]);
    // Maps without owned entries say nothing.
    expect(screen.getAllByRole('note')).toHaveLength(3);
  });

  it('says it in Chinese too', async () => {
    serve();
    await i18next.changeLanguage('zh');
    await renderScreen(() => <OperationSettings values={values} />);
    const note = within(
      await screen.findByRole('note', { name: 'GroupModelPrice 中由 Kubernetes 管理的价格条目' }),
    );
    expect(note.getByText('由 Kubernetes 管理')).toBeTruthy();
    expect(note.getByText('vip/gpt-4o（ModelPrice team-a/vip-prices）')).toBeTruthy();
  });
});

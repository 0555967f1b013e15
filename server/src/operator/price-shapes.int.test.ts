/**
 * A ModelPrice's long-context tiers, service tiers and fees, through the stand-in API server and the real
 * operator: the API server refuses what the schema and its CEL rules refuse, the operator writes each number as an
 * entry of its own (LongContextTiers, ServiceTierRatio, RequestFees), the relay serves them, and they go with the
 * resource.
 *
 * Figures: Claude Sonnet 4.5 (https://docs.anthropic.com/en/docs/about-claude/pricing) costs $3 / $15 per million,
 * $6 / $22.50 above 200K prompt tokens (× 2, × 1.5), and $10 per 1,000 web searches; GPT-5
 * (https://platform.openai.com/docs/pricing) twice its price at the priority tier, half at flex.
 */
import { optionSources } from '@turnpike/core/db/schema/option-sources';
import type { Operator } from '@turnpike/operator/operator';
import { waitFor } from '@turnpike/operator/testing/wait';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type RelayProcess } from '../testing/operator-harness.ts';

const NS = 'team-a';
const T = { group: 'turnpike.dev', version: 'v1alpha1', plural: 'modelprices', namespace: NS } as const;

let h: Harness;
let operator: Operator;
let relay: RelayProcess;

beforeAll(async () => {
  h = await createHarness();
  relay = await h.startRelay();
  operator = await h.startOperator({ port: 0, host: '127.0.0.1' });
  await waitFor(() => operator.isLeader(), { what: 'leadership' });
});
afterAll(async () => {
  await h?.close();
});

const price = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'ModelPrice',
  metadata: { name, namespace: NS },
  spec,
});
type Cr = { status?: { optionEntries?: string[]; conditions?: { type: string; status: string }[] } };
const getCr = (name: string) => h.api.get({ ...T, name }) as Cr | undefined;
const isReady = (name: string) =>
  getCr(name)?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const owned = async (name: string) =>
  (await h.database.db.select().from(optionSources).where(eq(optionSources.sourceName, name)))
    .map((r) => `${r.optionKey}[${r.entry}]=${r.value}`)
    .sort();

describe('ModelPrice price shapes against the stand-in API server', () => {
  it('writes tiers, service tiers and fees entry by entry, served by the relay, and removes them with the resource', async () => {
    h.api.apply(
      price('sonnet', {
        models: ['claude-sonnet-4-5'],
        price: { input: '3', output: '15' },
        longContext: [{ above: 200000, input: '2', output: '1.5' }],
        fees: { webSearch: '0.01' },
      }),
    );
    h.api.apply(
      price('gpt-5', {
        models: ['gpt-5'],
        price: { input: '1.25', output: '10' },
        serviceTiers: { priority: '2', flex: '0.5' },
      }),
    );
    await waitFor(() => isReady('sonnet') && isReady('gpt-5'), { what: 'prices ready' });
    expect(await owned('sonnet')).toEqual([
      'CompletionRatio[claude-sonnet-4-5]=5',
      'LongContextTiers[claude-sonnet-4-5/200000/cache]=2',
      'LongContextTiers[claude-sonnet-4-5/200000/input]=2',
      'LongContextTiers[claude-sonnet-4-5/200000/output]=1.5',
      'ModelRatio[claude-sonnet-4-5]=1.5',
      'RequestFees[claude-sonnet-4-5/web_search]=0.01',
    ]);
    expect(getCr('gpt-5')?.status?.optionEntries).toEqual([
      'ModelRatio[gpt-5]',
      'CompletionRatio[gpt-5]',
      'ServiceTierRatio[gpt-5/priority]',
      'ServiceTierRatio[gpt-5/flex]',
    ]);
    await waitFor(() => relay.options.get('ServiceTierRatio')['gpt-5'] !== undefined, {
      what: 'relay tiers',
    });
    await waitFor(() => relay.options.get('LongContextTiers')['claude-sonnet-4-5'] !== undefined, {
      what: 'relay long context',
    });
    expect(relay.options.get('LongContextTiers')['claude-sonnet-4-5']).toEqual([
      { above: 200000, input: 2, output: 1.5, cache: 2 },
    ]);
    expect(relay.options.get('ServiceTierRatio')['gpt-5']).toEqual({ priority: 2, flex: 0.5 });
    expect(relay.options.get('RequestFees')['claude-sonnet-4-5']).toEqual({ web_search: 0.01 });

    h.api.remove({ ...T, name: 'sonnet' });
    await waitFor(() => getCr('sonnet') === undefined, { what: 'sonnet gone' });
    expect(await owned('sonnet')).toEqual([]);
    await waitFor(() => relay.options.get('LongContextTiers')['claude-sonnet-4-5'] === undefined, {
      what: 'relay tier gone',
    });
    expect(relay.options.get('RequestFees')['claude-sonnet-4-5']).toBeUndefined();
    expect(relay.options.get('ServiceTierRatio')['gpt-5']).toEqual({ priority: 2, flex: 0.5 });
  });

  it.each([
    [
      'tiers at the same threshold',
      {
        models: ['m'],
        ratio: { model: '1' },
        longContext: [
          { above: 200000, input: '2', output: '1.5' },
          { above: 200000, input: '3', output: '2' },
        ],
      },
      'two long-context tiers start at the same number of tokens',
    ],
    [
      'fees for some groups',
      { models: ['m'], groups: ['vip'], ratio: { model: '1' }, fees: { webSearch: '0.01' } },
      'apply to every group',
    ],
    [
      'a service tier in capitals',
      { models: ['m'], ratio: { model: '1' }, serviceTiers: { Priority: '2' } },
      'a service tier is lower-case letters',
    ],
  ])('is refused by the API server: %s, and nothing is written', async (_name, spec, message) => {
    expect(() => h.api.apply(price('refused', spec))).toThrow(message);
    expect(getCr('refused')).toBeUndefined();
    expect(await owned('refused')).toEqual([]);
  });
});

/**
 * Group quota windows set through a GatewayOption (issue 39): the controller is generic over option keys, so the
 * option registry's check is what accepts or refuses them. Against the stand-in API server and a fresh database.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { options as optionsTable } from '@turnpike/core/db/schema/options';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createHarness, type Harness } from '../../testing/operator-harness.ts';
import { waitFor } from '../../testing/wait.ts';

const NS = 'budgets';
const EXAMPLE = path.resolve(import.meta.dirname, '../../../../deploy/examples/quota-windows.yaml');

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  const operator = await h.startOperator();
  await waitFor(() => operator.isLeader(), { what: 'leadership' });
});
afterAll(async () => {
  await h?.close();
});

const gatewayOption = (name: string, values: Record<string, string>) => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'GatewayOption',
  metadata: { name, namespace: NS },
  spec: { values },
});
const ready = (name: string) =>
  (
    h.api.get({
      group: 'turnpike.dev',
      version: 'v1alpha1',
      plural: 'gatewayoptions',
      namespace: NS,
      name,
    }) as
      | { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }
      | undefined
  )?.status?.conditions?.find((c) => c.type === 'Ready');
const stored = async (key: string) =>
  (await h.database.db.select().from(optionsTable).where(eq(optionsTable.key, key)))[0]?.value;

describe('GroupQuotaWindows in a GatewayOption', () => {
  it('refuses windows the registry rejects with Ready=False and its message, storing nothing', async () => {
    h.api.apply(
      gatewayOption('bad-windows', {
        GroupQuotaWindows: '{"vip": [{"unit": "quota", "limit": 0, "period": "day"}]}',
      }),
    );
    await waitFor(() => ready('bad-windows')?.status === 'False', { what: 'Ready=False' });
    expect(ready('bad-windows')).toMatchObject({ reason: 'InvalidOption' });
    expect(ready('bad-windows')?.message).toContain('limit must be more than 0');

    h.api.apply(gatewayOption('bad-zone', { QuotaWindowTimeZone: 'Mars/Olympus' }));
    await waitFor(() => ready('bad-zone')?.status === 'False', { what: 'Ready=False' });
    expect(ready('bad-zone')?.message).toContain('must be a time zone name such as UTC or Asia/Shanghai');

    expect(await stored('GroupQuotaWindows')).toBeUndefined();
    expect(await stored('QuotaWindowTimeZone')).toBeUndefined();
  });

  it('applies the example of deploy/examples: the windows of each group and the time zone', async () => {
    const example = parse(readFileSync(EXAMPLE, 'utf8')) as { spec: { values: Record<string, string> } };
    h.api.apply(gatewayOption('quota-windows', example.spec.values));
    await waitFor(() => ready('quota-windows')?.status === 'True', { what: 'Ready=True' });
    expect(await stored('QuotaWindowTimeZone')).toBe('Asia/Shanghai');
    expect(JSON.parse((await stored('GroupQuotaWindows')) ?? '')).toEqual({
      vip: [
        { unit: 'quota', limit: 2_500_000, period: 'day' },
        { unit: 'quota', limit: 50_000_000, period: 'month' },
        { unit: 'requests', limit: 2000, period: 'rolling', hours: 5 },
      ],
      trial: [{ unit: 'requests', limit: 100, period: 'day' }],
    });
  });
});

import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { createChannelWriter, type DesiredChannel } from '@turnpike/core/channels/channel-writes';
import { createManagedOptionWriter } from '@turnpike/core/options/managed-options';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

/** What the operator writes for a Channel resource (docs/adr/0017). */
const desired: DesiredChannel = {
  name: 'team-a/openai',
  type: 1,
  key: 'sk-from-a-secret',
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  testModel: null,
  models: 'gpt-4o',
  group: 'default',
  priority: 0,
  weight: 0,
  tag: 'gitops',
  status: 2,
  autoBan: 1,
  maxInputTokens: 0,
  rpmLimit: 0,
  tpmLimit: 0,
  concurrencyLimit: 0,
  modelMapping: null,
  statusCodeMapping: null,
  setting: null,
  paramOverride: null,
};
const source = { kind: 'Channel', namespace: 'team-a', name: 'openai', generation: 3 } as const;

describe('rows a Kubernetes resource owns', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let managedId: number;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
    const { db, bus, config } = t.runtime.deps;
    const writer = createChannelWriter({ db, bus, box: createChannelKeyBox(config.cryptoSecret) });
    managedId = (await writer.applyManaged(source, [desired])).rows[0]!.id;
    const options = createManagedOptionWriter({ db, bus });
    await options.apply({
      source: { kind: 'GatewayOption', namespace: 'team-a', name: 'branding', generation: 1 },
      values: [{ key: 'SystemName', entry: '', text: 'Acme' }],
    });
    await options.apply({
      source: { kind: 'ModelPrice', namespace: 'team-a', name: 'gpt-4o', generation: 2 },
      values: [{ key: 'ModelRatio', entry: 'gpt-4o', number: 1.25 }],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const refusal = (response: { statusCode: number; json(): unknown }) => {
    const body = response.json() as { success: boolean; code?: string; message: string };
    return { status: response.statusCode, success: body.success, code: body.code, message: body.message };
  };

  it('shows who owns a channel, and refuses to edit, disable, tag or delete it, naming the resource', async () => {
    const view = (await root.get(`/api/channel/${managedId}`)).json().data;
    expect(view.managed_by).toEqual(source);
    for (const response of [
      await root.put('/api/channel/', { id: managedId, priority: 9 }),
      await root.put('/api/channel/', { id: managedId, status: 1 }),
      await root.delete(`/api/channel/${managedId}`),
      await root.post('/api/channel/batch', { ids: [managedId] }),
      await root.post('/api/channel/batch/tag', { ids: [managedId], tag: 'x' }),
      await root.post('/api/channel/tag/enabled', { tag: 'gitops' }),
    ])
      expect(refusal(response)).toMatchObject({
        status: 409,
        success: false,
        code: 'MANAGED_BY_KUBERNETES',
        message: expect.stringContaining('Channel team-a/openai'),
      });
    const after = (await root.get(`/api/channel/${managedId}`)).json().data;
    expect(after).toMatchObject({ priority: 0, status: 2, tag: 'gitops' });
  });

  it('leaves a managed channel alone when deleting disabled channels, and copies it as one the administrator owns', async () => {
    await root.delete('/api/channel/disabled');
    expect((await root.get(`/api/channel/${managedId}`)).json().data.id).toBe(managedId);
    const copy = (await root.post(`/api/channel/copy/${managedId}`, {})).json().data;
    expect(copy.managed_by).toBeNull();
    expect((await root.put('/api/channel/', { id: copy.id, priority: 4 })).json().success).toBe(true);
  });

  it('refuses an option a GatewayOption sets and a price entry a ModelPrice sets; other entries stay editable', async () => {
    expect(refusal(await root.put('/api/option/', { key: 'SystemName', value: 'Mine' }))).toMatchObject({
      status: 409,
      code: 'MANAGED_BY_KUBERNETES',
      message: expect.stringContaining('GatewayOption team-a/branding'),
    });
    const ratios = JSON.parse(
      ((await root.get('/api/option/')).json().data as { key: string; value: string }[]).find(
        (o) => o.key === 'ModelRatio',
      )!.value,
    ) as Record<string, number>;
    expect(ratios['gpt-4o']).toBe(1.25);
    const changed = { ...ratios, 'gpt-4o': 9 };
    expect(
      refusal(await root.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify(changed) })),
    ).toMatchObject({
      status: 409,
      message: expect.stringContaining('ModelPrice team-a/gpt-4o'),
    });
    const other = { ...ratios, 'my-own-model': 2 };
    expect(
      (await root.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify(other) })).json().success,
    ).toBe(true);
    // A reset of the map keeps the owned entries (still listed below); only the console's own entries go.
    expect(refusal(await root.post('/api/option/rest_model_ratio', {}))).toMatchObject({ status: 200 });
    const owners = (await root.get('/api/option/owners')).json().data;
    expect(owners).toEqual(
      expect.arrayContaining([
        {
          key: 'SystemName',
          entry: '',
          kind: 'GatewayOption',
          namespace: 'team-a',
          name: 'branding',
          generation: 1,
        },
        {
          key: 'ModelRatio',
          entry: 'gpt-4o',
          kind: 'ModelPrice',
          namespace: 'team-a',
          name: 'gpt-4o',
          generation: 2,
        },
      ]),
    );
  });
});

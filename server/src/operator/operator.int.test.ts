import { changeKeyRing } from '@turnpike/core/channels/key-ring-writes';
import { parseChannelInfo, setKeyStates } from '@turnpike/core/channels/multi-key';
import { channels } from '@turnpike/core/db/schema/channels';
import { logs, users } from '@turnpike/core/db/schema/index';
import { optionSources } from '@turnpike/core/db/schema/option-sources';
import { options as optionsTable } from '@turnpike/core/db/schema/options';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { FINALIZER } from '@turnpike/operator/api/v1alpha1';
import type { Operator } from '@turnpike/operator/operator';
import { waitFor } from '@turnpike/operator/testing/wait';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type RelayProcess } from '../testing/operator-harness.ts';

const NS = 'team-a';
const T = { group: 'turnpike.dev', version: 'v1alpha1' } as const;

let h: Harness;
let operator: Operator;
let relay: RelayProcess;
let upstream: FakeOpenAi;

beforeAll(async () => {
  h = await createHarness();
  upstream = await startFakeOpenAi({ apiKey: 'sk-good' });
  await h.setOption('SelfUseModeEnabled', 'true');
  relay = await h.startRelay();
  operator = await h.startOperator({ port: 0, host: '127.0.0.1' });
  await waitFor(() => operator.isLeader(), { what: 'leadership' });
});
afterAll(async () => {
  await h?.close();
  await upstream?.close();
});

const secret = (name: string, key: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS, labels: { 'turnpike.dev/credential': 'true' } },
  stringData: { apiKey: key },
});
const channel = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name, namespace: NS },
  spec: { type: 'openai', baseURL: upstream.url, keySecretRef: { name }, ...spec },
});
const getCr = (plural: string, name: string) =>
  h.api.get({ ...T, plural, namespace: NS, name }) as
    | {
        metadata: { generation: number; finalizers?: string[] };
        status?: Record<string, unknown> & {
          conditions?: { type: string; status: string; reason: string; message: string }[];
        };
      }
    | undefined;
const ready = (plural: string, name: string) =>
  getCr(plural, name)?.status?.conditions?.find((c) => c.type === 'Ready');
const rowsOf = (name: string) =>
  h.database.db.select().from(channels).where(eq(channels.sourceName, name)).orderBy(channels.sourceIndex);
const call = (model: string) =>
  relay.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: h.auth,
    payload: { model, messages: [{ role: 'user', content: 'hi' }] },
  });

/** The channel ids the relay has loaded: its channel health gauge has one sample per channel row it routes with. */
const relayChannelIds = async () => {
  const text = (await relay.app.inject({ method: 'GET', url: '/metrics' })).body;
  return [...text.matchAll(/^turnpike_relay_channel_state\{channel="(\d+)"/gm)].map((m) => Number(m[1]));
};
/**
 * Whether the relay routes with exactly the channel rows the database holds: a row the operator deleted (an old
 * key after a rotation) is gone from the relay too, so no call can still be sent with it.
 */
const relayHasDatabaseChannels = async () => {
  const stored = (await h.database.db.select({ id: channels.id }).from(channels)).map((r) => r.id);
  const loaded = await relayChannelIds();
  return stored.length === loaded.length && stored.every((id) => loaded.includes(id));
};

describe('operator against the stand-in API server', () => {
  it('creates a channel from a Channel and its Secret, routable by the relay, with Ready status and a finalizer', async () => {
    h.api.apply(secret('alpha', 'sk-good'));
    h.api.apply(channel('alpha', { models: ['alpha-model'], priority: 3, groups: ['default', 'vip'] }));
    await waitFor(() => ready('channels', 'alpha')?.status === 'True', { what: 'Ready=True' });
    const cr = getCr('channels', 'alpha')!;
    expect(cr.metadata.finalizers).toContain(FINALIZER);
    expect(cr.status).toMatchObject({ observedGeneration: 1, configVersion: expect.any(Number) });
    expect(cr.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=True',
      'KeyResolved=True',
      'Valid=True',
      'Applied=True',
    ]);
    const [row] = await rowsOf('alpha');
    expect(row).toMatchObject({
      sourceKind: 'Channel',
      sourceNamespace: NS,
      sourceGeneration: 1,
      models: 'alpha-model',
      group: 'default,vip',
      priority: 3,
    });
    expect(h.box.open(row!.key)).toBe('sk-good');
    expect(cr.status?.channelIDs).toEqual([row!.id]);
    expect(JSON.stringify(cr.status)).not.toContain('sk-good');
    await waitFor(async () => (await call('alpha-model')).statusCode === 200, { what: 'routable' });
  });

  it('applies an update and records the new generation; an unchanged resync writes nothing', async () => {
    h.api.apply(channel('alpha', { models: ['alpha-model', 'alpha-2'], priority: 7 }));
    await waitFor(() => getCr('channels', 'alpha')?.status?.observedGeneration === 2, {
      what: 'generation 2',
    });
    const [row] = await rowsOf('alpha');
    expect(row).toMatchObject({ models: 'alpha-model,alpha-2', priority: 7, sourceGeneration: 2 });
    await waitFor(async () => (await call('alpha-2')).statusCode === 200, { what: 'alpha-2 routable' });
  });

  it('rotates keys when the Secret changes: one multi-key channel, its keys changed in place keeping their state', async () => {
    const before = (await rowsOf('alpha'))[0]!.id;
    h.api.apply(secret('alpha', 'sk-good\nsk-other'));
    await waitFor(
      async () => parseChannelInfo((await rowsOf('alpha'))[0]?.channelInfo).multi_key_size === 2,
      {
        what: 'two keys',
      },
    );
    let rows = await rowsOf('alpha');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(before);
    expect(h.box.open(rows[0]!.key)).toBe('sk-good\nsk-other');
    // A key disabled at run time keeps its state while the Secret lists it, at its new position.
    await changeKeyRing({ db: h.database.db, bus: relay.bus, box: h.box }, before, (ring) => ({
      ring: setKeyStates(ring, [1], { status: 3, reason: 'upstream answered 401 Unauthorized', time: 1 }),
      result: undefined,
    }));
    h.api.apply(secret('alpha', 'sk-third\nsk-other\nsk-good'));
    await waitFor(
      async () => parseChannelInfo((await rowsOf('alpha'))[0]?.channelInfo).multi_key_size === 3,
      {
        what: 'three keys',
      },
    );
    rows = await rowsOf('alpha');
    expect(h.box.open(rows[0]!.key)).toBe('sk-third\nsk-other\nsk-good');
    expect(parseChannelInfo(rows[0]!.channelInfo)).toMatchObject({
      multi_key_status_list: { 1: 3 },
      multi_key_disabled_reason: { 1: 'upstream answered 401 Unauthorized' },
    });
    h.api.apply(secret('alpha', 'sk-good'));
    await waitFor(async () => h.box.open((await rowsOf('alpha'))[0]!.key) === 'sk-good', {
      what: 'back to one key',
    });
    rows = await rowsOf('alpha');
    expect(rows).toHaveLength(1);
    expect(parseChannelInfo(rows[0]!.channelInfo).is_multi_key).toBe(false);
    await waitFor(
      () => (getCr('channels', 'alpha')?.status?.channelIDs as number[] | undefined)?.length === 1,
    );
    await waitFor(relayHasDatabaseChannels, { what: 'relay with the channel rows' });
  });

  it('refuses a Channel whose Secret is missing: Ready=False with the reason, a Warning event, nothing written; fixes itself when the Secret arrives', async () => {
    // What the relay routes alpha-model with is settled before this test leans on it (a rotation before this one
    // may still be on its way to the relay: a call sent with the removed key is answered 401 by the upstream).
    await waitFor(relayHasDatabaseChannels, { what: 'relay caught up with the channel rows' });
    h.api.apply(channel('beta', { models: ['beta-model'] }));
    await waitFor(() => ready('channels', 'beta')?.reason === 'SecretNotFound', { what: 'SecretNotFound' });
    expect(ready('channels', 'beta')).toMatchObject({ status: 'False' });
    expect(await rowsOf('beta')).toEqual([]);
    await waitFor(() => h.api.events(NS).some((e) => (e as { reason?: string }).reason === 'SecretNotFound'));
    // Every other resource keeps working.
    expect((await call('alpha-model')).statusCode).toBe(200);
    h.api.apply(secret('beta', 'sk-good'));
    await waitFor(() => ready('channels', 'beta')?.status === 'True', {
      what: 'beta ready after the Secret',
    });
    expect(await rowsOf('beta')).toHaveLength(1);
  });

  it('refuses an unknown provider that passed the schema, writing nothing', async () => {
    h.api.apply(secret('gamma', 'sk-good'));
    h.api.apply(channel('gamma', { type: 'acme', models: ['gamma-model'] }));
    await waitFor(() => ready('channels', 'gamma')?.reason === 'UnknownProvider');
    expect(await rowsOf('gamma')).toEqual([]);
  });

  it('removes the rows of a deleted Channel, then its finalizer, and the model stops routing', async () => {
    h.api.remove({ ...T, plural: 'channels', namespace: NS, name: 'beta' });
    await waitFor(() => getCr('channels', 'beta') === undefined, { what: 'beta gone' });
    expect(await rowsOf('beta')).toEqual([]);
    await waitFor(async () => (await call('beta-model')).statusCode !== 200, { what: 'beta unroutable' });
  });

  it('writes ModelPrice entries as rows of their own, served in the price options, and removes them with the resource', async () => {
    const mapsBefore = await h.database.db.select().from(optionsTable);
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name: 'alpha-price', namespace: NS },
      spec: { models: ['alpha-model'], price: { input: '2.5', output: '10', cacheWrite: '3.125' } },
    });
    await waitFor(() => ready('modelprices', 'alpha-price')?.status === 'True', { what: 'price ready' });
    const owned = async () =>
      (await h.database.db.select().from(optionSources).where(eq(optionSources.sourceName, 'alpha-price')))
        .map((r) => `${r.optionKey}[${r.entry}]=${r.value}`)
        .sort();
    expect(await owned()).toEqual([
      'CompletionRatio[alpha-model]=4',
      'CreateCacheRatio[alpha-model]=1.25',
      'ModelRatio[alpha-model]=1.25',
    ]);
    // The price maps' own rows are the console's: the operator did not write them.
    expect(await h.database.db.select().from(optionsTable)).toEqual(mapsBefore);
    const served = (key: 'ModelRatio' | 'CompletionRatio' | 'CreateCacheRatio') =>
      (relay.options.get(key) as Record<string, number>)['alpha-model'];
    await waitFor(() => served('ModelRatio') === 1.25, { what: 'relay price' });
    expect(served('CompletionRatio')).toBe(4);
    expect(served('CreateCacheRatio')).toBe(1.25);
    expect(JSON.parse(relay.options.getText('ModelRatio'))['alpha-model']).toBe(1.25);
    h.api.remove({ ...T, plural: 'modelprices', namespace: NS, name: 'alpha-price' });
    await waitFor(() => getCr('modelprices', 'alpha-price') === undefined);
    expect(await owned()).toEqual([]);
    await waitFor(() => served('ModelRatio') === undefined, { what: 'relay price gone' });
  });

  it('writes a price for some groups into the group maps the relays serve, and takes it out with the resource', async () => {
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name: 'vip-price', namespace: NS },
      spec: { models: ['alpha-model'], groups: ['vip', 'svip'], ratio: { model: '0.5', completion: '2' } },
    });
    await waitFor(() => ready('modelprices', 'vip-price')?.status === 'True', { what: 'group price ready' });
    expect(getCr('modelprices', 'vip-price')?.status?.optionEntries).toEqual([
      'GroupModelRatio[vip/alpha-model]',
      'GroupCompletionRatio[vip/alpha-model]',
      'GroupModelRatio[svip/alpha-model]',
      'GroupCompletionRatio[svip/alpha-model]',
    ]);
    await waitFor(
      () =>
        (relay.options.get('GroupModelRatio') as Record<string, Record<string, number>>).svip?.[
          'alpha-model'
        ] === 0.5,
      { what: 'relay group price' },
    );
    expect(relay.options.get('GroupCompletionRatio')).toEqual({
      vip: { 'alpha-model': 2 },
      svip: { 'alpha-model': 2 },
    });
    h.api.remove({ ...T, plural: 'modelprices', namespace: NS, name: 'vip-price' });
    await waitFor(() => JSON.stringify(relay.options.get('GroupModelRatio')) === '{}', {
      what: 'group price gone',
    });
  });

  it('bills a token of the group its ModelPrice for that group, without GroupRatio, and another token the price without groups', async () => {
    h.api.apply(secret('grouped', 'sk-good'));
    h.api.apply(channel('grouped', { models: ['grouped-model'], groups: ['default', 'vip'] }));
    const price = (name: string, spec: Record<string, unknown>) => ({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name, namespace: NS },
      spec: { models: ['grouped-model'], ...spec },
    });
    h.api.apply(price('grouped-all', { ratio: { model: '2' } }));
    h.api.apply(price('grouped-vip', { groups: ['vip'], price: { input: '1', output: '4' } }));
    await h.setOption('GroupRatio', '{"default":1,"vip":3,"svip":1}');
    for (const name of ['grouped-all', 'grouped-vip'])
      await waitFor(() => ready('modelprices', name)?.status === 'True', { what: `${name} ready` });
    await waitFor(
      () =>
        (relay.options.get('GroupModelRatio') as Record<string, Record<string, number>>).vip?.[
          'grouped-model'
        ] === 0.5 && relay.options.get('GroupRatio').vip === 3,
      { what: 'relay group price' },
    );
    await waitFor(async () => (await call('grouped-model')).statusCode === 200, { what: 'routable' });

    const [user] = await h.database.db.select().from(users).limit(1);
    const vipToken = await createTokenRepo(h.database.db).insert({
      userId: user!.id,
      key: generateTokenKey(),
      name: 'vip',
      remainQuota: 0,
      unlimitedQuota: true,
      group: 'vip',
    });
    const billed = async (headers: Record<string, string>) => {
      const response = await relay.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers,
        payload: { model: 'grouped-model', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(response.statusCode).toBe(200);
      const requestId = response.headers['x-request-id'] as string;
      const logOf = async () =>
        (await h.database.db.select().from(logs).where(eq(logs.requestId, requestId)))[0];
      await waitFor(async () => (await logOf()) !== undefined, { what: 'consume log' });
      const log = (await logOf()) as NonNullable<Awaited<ReturnType<typeof logOf>>>;
      return { group: log.group, ...(JSON.parse(log.other ?? '{}') as Record<string, unknown>) };
    };
    expect(await billed({ authorization: `Bearer sk-${vipToken.key}` })).toMatchObject({
      group: 'vip',
      model_ratio: 0.5,
      completion_ratio: 4,
      group_ratio: 1,
    });
    expect(await billed(h.auth)).toMatchObject({ group: 'default', model_ratio: 2, group_ratio: 1 });
  });

  it('refuses a ModelPrice for a model another ModelPrice already prices, naming the owner', async () => {
    const price = (name: string, ratio: string) => ({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'ModelPrice',
      metadata: { name, namespace: NS },
      spec: { models: ['shared-model'], ratio: { model: ratio } },
    });
    h.api.apply(price('first-price', '1'));
    await waitFor(() => ready('modelprices', 'first-price')?.status === 'True');
    h.api.apply(price('second-price', '2'));
    await waitFor(() => ready('modelprices', 'second-price')?.reason === 'Conflict', { what: 'Conflict' });
    expect(ready('modelprices', 'second-price')?.message).toContain(`ModelPrice ${NS}/first-price`);
    await waitFor(() => (relay.options.get('ModelRatio') as Record<string, number>)['shared-model'] === 1);
  });

  it('refuses a GatewayOption value the registry rejects, and applies a good one', async () => {
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'GatewayOption',
      metadata: { name: 'bad', namespace: NS },
      spec: { values: { GroupRatio: '{"vip":1}' } },
    });
    await waitFor(() => ready('gatewayoptions', 'bad')?.reason === 'InvalidOption');
    h.api.apply({
      apiVersion: 'turnpike.dev/v1alpha1',
      kind: 'GatewayOption',
      metadata: { name: 'branding', namespace: NS },
      spec: { values: { SystemName: 'Acme Gateway' } },
    });
    await waitFor(() => ready('gatewayoptions', 'branding')?.status === 'True');
    await waitFor(() => relay.options.get('SystemName') === 'Acme Gateway', { what: 'relay option' });
  });

  it('survives a dropped watch and a compacted history (410): changes made meanwhile still arrive', async () => {
    h.api.dropWatches();
    h.api.apply(channel('alpha', { models: ['alpha-model', 'alpha-3'], priority: 7 }));
    await waitFor(async () => (await rowsOf('alpha'))[0]?.models.includes('alpha-3') === true, {
      what: 'after drop',
    });
    // Synchronous, so the informer reconnects only after the change it missed has left the history.
    h.api.dropWatches();
    h.api.apply(channel('alpha', { models: ['alpha-model', 'alpha-4'], priority: 7 }));
    h.api.compact();
    await waitFor(async () => (await rowsOf('alpha'))[0]?.models.includes('alpha-4') === true, {
      what: 'after 410',
    });
    const metrics = await operator.metrics.registry.metrics();
    expect(metrics).toMatch(/turnpike_operator_watch_restarts_total\{kind="Channel"\} [1-9]/);
  });

  it('restarts a failing watch with backoff and catches up', async () => {
    const restarts = async () =>
      (await operator.metrics.watchRestarts.get()).values.find((v) => v.labels.kind === 'Channel')?.value ??
      0;
    const before = await restarts();
    h.api.inject({ method: 'GET', path: '/channels', status: 500, times: 3 });
    h.api.dropWatches();
    h.api.apply(channel('alpha', { models: ['alpha-model', 'alpha-6'], priority: 7 }));
    await waitFor(async () => (await rowsOf('alpha'))[0]?.models.includes('alpha-6') === true, {
      what: 'after watch errors',
    });
    expect(await restarts()).toBeGreaterThan(before);
  });

  it('never puts key material in status or Events', async () => {
    const everything = JSON.stringify([h.api.list({ ...T, plural: 'channels' }), h.api.events(NS)]);
    expect(everything).not.toMatch(/sk-good|sk-other/);
  });

  it('retries with backoff when the API server fails, without losing the change', async () => {
    h.api.inject({ method: 'PATCH', path: '/status', status: 500, times: 2 });
    h.api.apply(channel('alpha', { models: ['alpha-model', 'alpha-5'], priority: 7 }));
    const generation = getCr('channels', 'alpha')!.metadata.generation;
    await waitFor(() => getCr('channels', 'alpha')?.status?.observedGeneration === generation, {
      what: 'status after faults',
    });
    expect(await operator.metrics.registry.metrics()).toMatch(
      /turnpike_operator_reconcile_total\{kind="Channel",result="error"\} [1-9]/,
    );
  });

  it('serves /healthz, /readyz and /metrics with the agreed names', async () => {
    const base = `http://127.0.0.1:${operator.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'turnpike_operator_reconcile_total',
      'turnpike_operator_reconcile_duration_seconds',
      'turnpike_operator_queue_depth',
      'turnpike_operator_leader 1',
      'turnpike_operator_resources{kind="Channel",ready="True"}',
      'turnpike_operator_watch_restarts_total',
    ])
      expect(text).toContain(name);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FINALIZER } from '../api/v1alpha1.ts';
import {
  createKubeClient,
  type KubeClient,
  KubeError,
  kubeConfigFor,
  type WatchEventType,
} from '../kube/client.ts';
import { type FakeApiServer, startFakeApiServer } from './fake-api-server.ts';
import { waitFor } from './wait.ts';

const CH = { group: 'turnpike.dev', version: 'v1alpha1', plural: 'channels' } as const;
const channel = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name, namespace: 'team-a' },
  spec: { type: 'openai', keySecretRef: { name: 'k' }, models: ['gpt-4o'], ...extra },
});

let server: FakeApiServer;
let kube: KubeClient;

beforeEach(async () => {
  server = await startFakeApiServer();
  kube = createKubeClient(kubeConfigFor(server.url));
});
afterEach(async () => {
  await server.close();
});

/** Collects the events of one watch stream. */
async function watch(path: string, resourceVersion: string) {
  const events: { type: WatchEventType; name: string; rv: string }[] = [];
  let ended: unknown = 'open';
  const stop = await kube.watch(
    path,
    { resourceVersion },
    (type, object) => {
      const meta = (object as { metadata: { name: string; resourceVersion: string } }).metadata;
      events.push({ type, name: meta?.name, rv: meta?.resourceVersion });
    },
    (error) => {
      ended = error ?? null;
    },
  );
  return { events, stop, ended: () => ended };
}

describe('stand-in API server', () => {
  it('creates with defaults, uid, generation 1 and a resourceVersion; refuses an invalid object with 422', async () => {
    const created = server.apply(channel('a'));
    expect(created.metadata).toMatchObject({ generation: 1, namespace: 'team-a' });
    expect(created.metadata.uid).toBeTruthy();
    expect((created as unknown as { spec: { groups: string[] } }).spec.groups).toEqual(['default']);
    const list = await kube.list('channels', 'team-a');
    expect(list.items).toHaveLength(1);
    expect(Number(list.resourceVersion)).toBe(server.resourceVersion());
    expect(() => server.apply(channel('b', { models: [] }))).toThrow(/422 Invalid.*spec.models/);
  });

  it('lists and watches from a resourceVersion, replaying what came after it', async () => {
    server.apply(channel('a'));
    const { resourceVersion } = await kube.list('channels', undefined);
    server.apply(channel('b'));
    const w = await watch(kube.watchPath('channels', undefined), resourceVersion);
    await waitFor(() => w.events.length === 1);
    server.apply(channel('b', { weight: 5 }));
    server.remove({ ...CH, namespace: 'team-a', name: 'a' });
    await waitFor(() => w.events.length === 3);
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED b', 'MODIFIED b', 'DELETED a']);
    w.stop();
  });

  it('answers 410 Gone to a watch behind a compaction, and ends dropped watches', async () => {
    server.apply(channel('a'));
    const { resourceVersion } = await kube.list('channels', undefined);
    server.apply(channel('b'));
    server.compact();
    const gone = await watch(kube.watchPath('channels', undefined), resourceVersion);
    await waitFor(() => gone.ended() !== 'open');
    expect(String(gone.ended())).toMatch(/410|Gone|Expired/i);

    const live = await watch(kube.watchPath('channels', undefined), String(server.resourceVersion()));
    await waitFor(() => server.openWatches() === 1);
    server.dropWatches();
    await waitFor(() => live.ended() !== 'open');
    expect(live.ended()).toBeNull();
  });

  it('bumps generation only for spec changes, keeps status apart through the status subresource', async () => {
    server.apply(channel('a'));
    await kube.patchStatus('channels', 'team-a', 'a', { observedGeneration: 1 });
    let stored = server.get({ ...CH, namespace: 'team-a', name: 'a' })!;
    expect(stored.metadata.generation).toBe(1);
    expect(stored.status).toEqual({ observedGeneration: 1 });
    server.apply({ ...channel('a', { weight: 3 }), status: { observedGeneration: 99 } } as never);
    stored = server.get({ ...CH, namespace: 'team-a', name: 'a' })!;
    expect(stored.metadata.generation).toBe(2);
    expect(stored.status).toEqual({ observedGeneration: 1 });
    await kube.jsonPatch('channels', 'team-a', 'a', [
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
    stored = server.get({ ...CH, namespace: 'team-a', name: 'a' })!;
    expect(stored.metadata.generation).toBe(2);
  });

  it('guards a JSON patch with test: a stale resourceVersion fails and changes nothing', async () => {
    const created = server.apply(channel('a'));
    server.apply(channel('a', { weight: 1 }));
    const stale = kube.jsonPatch('channels', 'team-a', 'a', [
      { op: 'test', path: '/metadata/resourceVersion', value: created.metadata.resourceVersion },
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
    await expect(stale).rejects.toMatchObject({ code: 422 });
    expect(server.get({ ...CH, namespace: 'team-a', name: 'a' })!.metadata.finalizers).toBeUndefined();
  });

  it('holds a deleted object with finalizers until they are removed, and refuses new ones meanwhile', async () => {
    server.apply(channel('a'));
    await kube.jsonPatch('channels', 'team-a', 'a', [
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
    server.remove({ ...CH, namespace: 'team-a', name: 'a' });
    const held = server.get({ ...CH, namespace: 'team-a', name: 'a' })!;
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    await expect(
      kube.jsonPatch('channels', 'team-a', 'a', [
        { op: 'add', path: '/metadata/finalizers/-', value: 'x/y' },
      ]),
    ).rejects.toMatchObject({ code: 422 });
    await kube.jsonPatch('channels', 'team-a', 'a', [
      { op: 'replace', path: '/metadata/finalizers', value: [] },
    ]);
    expect(server.get({ ...CH, namespace: 'team-a', name: 'a' })).toBeUndefined();
  });

  it('takes Leases with optimistic concurrency: a stale replace gets 409 Conflict', async () => {
    const lease = await kube.createLease('ops', {
      metadata: { name: 'turnpike-operator' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15 },
    });
    await kube.replaceLease('ops', { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } });
    const stale = kube.replaceLease('ops', { ...lease, spec: { ...lease.spec, holderIdentity: 'c' } });
    await expect(stale).rejects.toBeInstanceOf(KubeError);
    await expect(stale).rejects.toMatchObject({ code: 409, reason: 'Conflict' });
    expect((await kube.readLease('ops', 'turnpike-operator'))?.spec?.holderIdentity).toBe('b');
  });

  it('lists Secrets by label, records Events, and fails injected requests', async () => {
    server.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1', namespace: 'team-a', labels: { 'turnpike.dev/credential': 'true' } },
      stringData: { apiKey: 'sk-1' },
    } as never);
    server.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's2', namespace: 'team-a' },
      stringData: { apiKey: 'sk-2' },
    } as never);
    const secrets = await kube.listSecrets(undefined, 'turnpike.dev/credential=true');
    expect(secrets.items.map((s) => s.metadata.name)).toEqual(['s1']);
    expect(Buffer.from(secrets.items[0]!.data!.apiKey!, 'base64').toString()).toBe('sk-1');

    await kube.createEvent(
      {
        namespace: 'team-a',
        regarding: { kind: 'Channel', name: 'a', namespace: 'team-a' },
        type: 'Warning',
        reason: 'SecretNotFound',
        note: 'n',
        action: 'Reconcile',
      },
      'turnpike.dev/operator',
      'pod-1',
    );
    expect(server.events('team-a').map((e) => (e as { reason?: string }).reason)).toEqual(['SecretNotFound']);

    server.inject({ method: 'GET', path: '/channels', status: 500, times: 1 });
    await expect(kube.list('channels', undefined)).rejects.toMatchObject({ code: 500 });
    await expect(kube.list('channels', undefined)).resolves.toBeTruthy();
  });
});

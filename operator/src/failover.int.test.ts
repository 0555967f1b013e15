import { channels } from '@turnpike/core/db/schema/channels';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operator } from './operator.ts';
import { createHarness, type Harness } from './testing/operator-harness.ts';
import { waitFor } from './testing/wait.ts';

const NS = 'team-b';
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const apply = (name: string) => {
  h.api.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS, labels: { 'turnpike.dev/credential': 'true' } },
    stringData: { apiKey: `sk-${name}` },
  });
  h.api.apply({
    apiVersion: 'turnpike.dev/v1alpha1',
    kind: 'Channel',
    metadata: { name, namespace: NS },
    spec: { type: 'openai', keySecretRef: { name }, models: [`${name}-model`] },
  });
};
const readyGeneration = (name: string) =>
  (
    h.api.get({ group: 'turnpike.dev', version: 'v1alpha1', plural: 'channels', namespace: NS, name }) as
      | { status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } }
      | undefined
  )?.status;
const isReady = (name: string) =>
  readyGeneration(name)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const reconciles = async (operator: Operator) => {
  const metric = await operator.metrics.reconcileTotal.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
};

describe('leader election between two operator processes', () => {
  it('lets only the leader write, and hands over to the standby when the leader dies without releasing the Lease', async () => {
    const first = await h.startOperator({ identity: 'first' });
    await waitFor(() => first.isLeader(), { what: 'first leads' });
    const second = await h.startOperator({ identity: 'second' });
    apply('one');
    await waitFor(() => isReady('one'), { what: 'one ready' });
    expect(second.isLeader()).toBe(false);
    expect(await reconciles(second)).toBe(0);

    // The leader dies: its Lease is not released, so the standby must wait for it to expire.
    const diedAt = Date.now();
    await first.stop({ releaseLease: false });
    apply('two');
    await waitFor(() => second.isLeader(), { what: 'second leads', timeoutMs: 10_000 });
    const tookOverMs = Date.now() - diedAt;
    await waitFor(() => isReady('two'), { what: 'two ready under the new leader' });
    expect(tookOverMs).toBeGreaterThanOrEqual(1_000); // not before the 2 s lease could have expired
    expect(tookOverMs).toBeLessThan(6_000);
    const rows = await h.database.db.select().from(channels).where(eq(channels.sourceNamespace, NS));
    expect(rows.map((r) => r.sourceName).sort()).toEqual(['one', 'two']);
    const lease = h.api.get({
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      namespace: 'turnpike-system',
      name: 'turnpike-operator',
    }) as unknown as { spec: { holderIdentity: string; leaseTransitions: number } };
    expect(lease.spec).toMatchObject({ holderIdentity: 'second', leaseTransitions: 1 });
    expect(await second.metrics.registry.getSingleMetricAsString('turnpike_operator_leader')).toMatch(
      /turnpike_operator_leader 1/,
    );
  });
});

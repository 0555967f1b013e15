import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { createChannelWriter, type DesiredChannel } from '@turnpike/core/channels/channel-writes';
import { auditLogs, channels } from '@turnpike/core/db/schema/index';
import { createManagedOptionWriter } from '@turnpike/core/options/managed-options';
import { createTestRuntime, type TestRuntime } from '@turnpike/core/testing/test-runtime';
import { desc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditChannelWrites, auditOptionWrites } from './audit.ts';

/** What the operator writes for a Channel resource whose Secret holds this key. */
const desired: DesiredChannel = {
  name: 'team-a/openai',
  type: 1,
  key: 'sk-from-a-secret-0123456789',
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  testModel: null,
  models: 'gpt-4o',
  group: 'default',
  priority: 0,
  weight: 0,
  tag: 'gitops',
  status: 1,
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
const source = { kind: 'Channel', namespace: 'team-a', name: 'openai', generation: 1 } as const;
const price = { kind: 'ModelPrice', namespace: 'team-a', name: 'gpt-4o', generation: 1 } as const;

describe("the operator's changes in the audit log", () => {
  let t: TestRuntime;
  let writer: ReturnType<typeof auditChannelWrites>;
  let options: ReturnType<typeof auditOptionWrites>;

  const db = () => t.runtime.deps.db;
  const rows = () => db().select().from(auditLogs).orderBy(desc(auditLogs.id));

  beforeAll(async () => {
    t = await createTestRuntime();
    const { db: database, bus, config } = t.runtime.deps;
    const deps = { db: database, bus };
    writer = auditChannelWrites(
      createChannelWriter({ ...deps, box: createChannelKeyBox(config.cryptoSecret) }),
      deps,
    );
    options = auditOptionWrites(createManagedOptionWriter(deps), deps);
  });
  afterAll(async () => {
    await t.close();
  });

  it('records a resource applied, as the operator, without its key, and a re-sync that changes nothing not at all', async () => {
    const applied = await writer.applyManaged(source, [desired]);
    expect(applied.changed).toBe(true);
    // The version the relays' presence counts is the one the change went out under, after the transaction.
    expect(applied.version).toBeGreaterThan(0);
    const [row] = await rows();
    expect(row).toMatchObject({
      actorType: 'operator',
      actorId: 0,
      kind: 'channel',
      action: 'apply resource',
      source: 'Channel team-a/openai',
      outcome: 'ok',
      targetIds: String(applied.rows[0]?.id),
    });
    expect(JSON.parse(row?.after ?? '')).toMatchObject({
      name: 'team-a/openai',
      key: '[secret]',
      tag: 'gitops',
    });
    expect(JSON.stringify(await rows())).not.toContain('0123456789');

    const again = await writer.applyManaged(source, [desired]);
    expect(again.changed).toBe(false);
    expect(await rows()).toHaveLength(1);

    await writer.applyManaged({ ...source, generation: 2 }, [{ ...desired, priority: 5 }]);
    const [changed] = await rows();
    expect(JSON.parse(changed?.before ?? '')).toMatchObject({ priority: 0 });
    expect(JSON.parse(changed?.after ?? '')).toMatchObject({ priority: 5 });
  });

  it('records prices a resource sets, entry by entry', async () => {
    const [outcome] = await options.applyBatch([
      { source: price, values: [{ key: 'ModelRatio', entry: 'gpt-4o', number: 1.25 }] },
    ]);
    expect(outcome).toMatchObject({ ok: true, changedKeys: ['ModelRatio'] });
    expect(outcome?.ok && outcome.version).toBeGreaterThan(0);
    const [row] = await rows();
    expect(row).toMatchObject({
      kind: 'option',
      source: 'ModelPrice team-a/gpt-4o',
      targetIds: 'ModelRatio',
    });
    expect(JSON.parse(row?.after ?? '')).toEqual({ ModelRatio: { 'gpt-4o': 1.25 } });
    const [removed] = await options.applyBatch([{ source: price, values: undefined }]);
    expect(removed).toMatchObject({ ok: true, changedKeys: ['ModelRatio'] });
    const [gone] = await rows();
    expect(JSON.parse(gone?.before ?? '')).toEqual({
      ModelRatio: { 'gpt-4o': 1.25 },
    });
  });

  it('does not make a change whose audit row cannot be written', async () => {
    await db().execute(sql`alter table audit_logs add constraint operator_refused check (false) not valid`);
    try {
      await expect(
        writer.applyManaged({ ...source, name: 'refused', generation: 1 }, [{ ...desired, name: 'refused' }]),
      ).rejects.toThrow(/audit record could not be written/);
    } finally {
      await db().execute(sql`alter table audit_logs drop constraint operator_refused`);
    }
    expect(await db().select().from(channels).where(eq(channels.name, 'refused'))).toEqual([]);
  });
});

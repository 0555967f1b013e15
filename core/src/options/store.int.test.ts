import { EventEmitter } from 'node:events';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDb, type Database } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { optionSources } from '../db/schema/option-sources.ts';
import { options as optionsTable } from '../db/schema/options.ts';
import { AppError } from '../errors.ts';
import type { EventBus, GatewayEvent } from '../events/bus.ts';
import { refuseManagedOption } from '../ownership/option-guard.ts';
import { createManagedOptionWriter, type ManagedOptionValue } from './managed-options.ts';
import { createOptionStore, type OptionStore } from './store.ts';

/** In-process bus: every subscriber hears every event, the publisher's own included. */
function createTestBus(): EventBus & { readonly seen: GatewayEvent[] } {
  const emitter = new EventEmitter();
  const seen: GatewayEvent[] = [];
  return {
    seen,
    async publish(event) {
      seen.push(event);
      emitter.emit('event', event);
      return seen.length;
    },
    appliedVersion: () => seen.length,
    onApplied: () => () => {},
    subscribe(handler) {
      emitter.on('event', handler);
      return () => emitter.off('event', handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

describe('option store', () => {
  let database: Database;
  let bus: ReturnType<typeof createTestBus>;
  const stores: OptionStore[] = [];

  /** A loaded, started store on the shared database and bus, stopped after the test. */
  async function openStore(options: { syncIntervalMs?: number; onError?: (e: unknown) => void } = {}) {
    const store = createOptionStore({ db: database.db, bus, ...options });
    await store.load();
    store.start();
    stores.push(store);
    return store;
  }

  async function storedRow(key: string): Promise<string | undefined> {
    const [row] = await database.db.select().from(optionsTable).where(eq(optionsTable.key, key));
    return row?.value;
  }

  // One database for the file (migrating one takes a second or two); each test starts from an empty table.
  beforeAll(async () => {
    database = await createDb({});
    await migrate(database);
  });

  afterAll(async () => {
    await database.close();
  });

  beforeEach(async () => {
    await database.db.delete(optionsTable);
    await database.db.delete(optionSources);
    bus = createTestBus();
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) store.stop();
    await bus.close();
  });

  it('serves defaults for keys that have no row', async () => {
    const store = await openStore();
    expect(store.get('QuotaPerUnit')).toBe(500000);
    expect(store.get('SystemName')).toBe('Turnpike');
    expect(store.getText('PasswordLoginEnabled')).toBe('true');
  });

  it('stores a value, serves it parsed and lists its normalised text', async () => {
    const store = await openStore();
    await store.set('RetryTimes', ' 3 ');
    await store.set('ServerAddress', 'https://gw.example.com/');
    expect(store.get('RetryTimes')).toBe(3);
    expect(store.get('ServerAddress')).toBe('https://gw.example.com');
    expect(store.list()).toContainEqual({ key: 'RetryTimes', value: '3' });
    expect(await storedRow('RetryTimes')).toBe('3');
  });

  it('loads stored values when a process starts', async () => {
    await (await openStore()).set('GroupRatio', '{"default":1,"vip":2}');
    const restarted = await openStore();
    expect(restarted.get('GroupRatio')).toEqual({ default: 1, vip: 2 });
  });

  it('announces each change on the bus with the keys that changed', async () => {
    const store = await openStore();
    await store.setMany([
      ['RetryTimes', '2'],
      ['DrawingEnabled', 'false'],
    ]);
    expect(bus.seen).toEqual([{ type: 'options.changed', keys: ['RetryTimes', 'DrawingEnabled'] }]);
  });

  it('never lists a secret, but can when asked to', async () => {
    const store = await openStore();
    await store.set('SMTPToken', 'smtp-password-value');
    await store.set('oidc.client_secret', 'oidc-secret-value');
    const listed = JSON.stringify(store.list());
    expect(listed).not.toContain('smtp-password-value');
    expect(listed).not.toContain('oidc-secret-value');
    expect(store.list().map((entry) => entry.key)).not.toContain('oidc.client_secret');
    expect(store.list({ includeSecrets: true })).toContainEqual({
      key: 'SMTPToken',
      value: 'smtp-password-value',
    });
    expect(store.getText('SMTPToken')).toBe('smtp-password-value');
  });

  it('rejects a RetryTimes above 10 and keeps the old value', async () => {
    const store = await openStore();
    await store.set('RetryTimes', '2');
    const attempt = store.set('RetryTimes', '11');
    await expect(attempt).rejects.toBeInstanceOf(AppError);
    await expect(attempt).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'RetryTimes must be an integer from 0 to 10',
    });
    expect(store.get('RetryTimes')).toBe(2);
    expect(await storedRow('RetryTimes')).toBe('2');
    expect(bus.seen).toHaveLength(1);
  });

  it('rejects an unknown key without storing a row', async () => {
    const store = await openStore();
    await expect(store.set('NoSuchOption', 'x')).rejects.toThrow('NoSuchOption is not a known option');
    expect(await storedRow('NoSuchOption')).toBeUndefined();
  });

  it('stores a batch all or nothing: one bad value keeps every old value', async () => {
    const store = await openStore();
    const attempt = store.setMany([
      ['RetryTimes', '4'],
      ['SystemName', 'Acme Gateway'],
      ['QuotaPerUnit', '0'],
    ]);
    await expect(attempt).rejects.toThrow('QuotaPerUnit must be a number greater than 0');
    expect(store.get('RetryTimes')).toBe(0);
    expect(store.get('SystemName')).toBe('Turnpike');
    expect(await storedRow('RetryTimes')).toBeUndefined();
    expect(await storedRow('SystemName')).toBeUndefined();
  });

  it('turns a sign-in provider on together with the value it needs, but not alone', async () => {
    const store = await openStore();
    await expect(store.set('GitHubOAuthEnabled', 'true')).rejects.toThrow(
      'GitHubOAuthEnabled cannot be turned on until GitHubClientId is set',
    );
    await store.setMany([
      ['GitHubClientId', 'Iv1.abc'],
      ['GitHubOAuthEnabled', 'true'],
    ]);
    expect(store.get('GitHubOAuthEnabled')).toBe(true);
    await expect(store.set('GitHubClientId', '')).rejects.toThrow(
      /cannot be emptied while GitHubOAuthEnabled is on/,
    );
    expect(store.get('GitHubClientId')).toBe('Iv1.abc');
  });

  it('resets an option to its default by deleting its row', async () => {
    const store = await openStore();
    await store.set('SystemName', 'Acme Gateway');
    await store.reset('SystemName');
    expect(store.get('SystemName')).toBe('Turnpike');
    expect(await storedRow('SystemName')).toBeUndefined();
  });

  it('refuses a reset that would break a rule', async () => {
    const store = await openStore();
    await store.setMany([
      ['oidc.client_id', 'turnpike'],
      ['oidc.enabled', 'true'],
    ]);
    await expect(store.reset('oidc.client_id')).rejects.toThrow(/cannot be emptied while oidc.enabled is on/);
    expect(await storedRow('oidc.client_id')).toBe('turnpike');
  });

  it('ignores rows of unknown keys but leaves them in the table', async () => {
    await database.db.insert(optionsTable).values({ key: 'LegacyPermission', value: '0' });
    const store = await openStore();
    await store.set('RetryTimes', '1');
    expect(store.has('LegacyPermission')).toBe(false);
    expect(store.list({ includeSecrets: true }).map((entry) => entry.key)).not.toContain('LegacyPermission');
    expect(await storedRow('LegacyPermission')).toBe('0');
  });

  it('serves the default for a stored value that no longer validates, and says so', async () => {
    await database.db.insert(optionsTable).values({ key: 'RetryTimes', value: '99' });
    const errors: unknown[] = [];
    const store = await openStore({ onError: (error) => errors.push(error) });
    expect(store.get('RetryTimes')).toBe(0);
    expect(String(errors[0])).toContain('RetryTimes must be an integer from 0 to 10');
  });

  it('parses a JSON option once per change and hands out a frozen value', async () => {
    const store = await openStore();
    await store.set('ModelRatio', '{"gpt-4o":1.25}');
    const first = store.get('ModelRatio');
    expect(store.get('ModelRatio')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('tells listeners which keys changed value, and only those', async () => {
    const store = await openStore();
    const heard: string[][] = [];
    store.onChange((keys) => heard.push([...keys]));
    await store.setMany([
      ['RetryTimes', '5'],
      ['SystemName', 'Turnpike'],
    ]);
    expect(heard).toEqual([['RetryTimes']]);
  });

  it('makes a change on one store visible on another store of the same database within a second', async () => {
    const a = await openStore();
    const b = await openStore();
    const heardOnB: string[][] = [];
    b.onChange((keys) => heardOnB.push([...keys]));
    await a.set('GroupRatio', '{"default":1,"vip":0.8}');
    await a.set('SystemName', 'Acme Gateway');
    await vi.waitFor(
      () => {
        expect(b.get('GroupRatio')).toEqual({ default: 1, vip: 0.8 });
        expect(b.get('SystemName')).toBe('Acme Gateway');
      },
      { timeout: 1000, interval: 10 },
    );
    expect(heardOnB.flat()).toEqual(['GroupRatio', 'SystemName']);
    await b.reset('SystemName');
    await vi.waitFor(() => expect(a.get('SystemName')).toBe('Turnpike'), { timeout: 1000, interval: 10 });
  });

  it('catches up by the periodic reload when a change event was lost', async () => {
    const store = await openStore({ syncIntervalMs: 50 });
    // Written behind the store's back: no event, as if the bus had dropped it.
    await database.db.insert(optionsTable).values({ key: 'RetryTimes', value: '7' });
    await vi.waitFor(() => expect(store.get('RetryTimes')).toBe(7), { timeout: 1000, interval: 10 });
  });

  it('stops following changes once stopped', async () => {
    const a = await openStore();
    const b = await openStore();
    b.stop();
    await a.set('RetryTimes', '6');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(b.get('RetryTimes')).toBe(0);
  });

  describe('price entries Kubernetes resources own', () => {
    const own = (name: string, values: ManagedOptionValue[] | undefined, generation = 1) =>
      createManagedOptionWriter({ db: database.db, bus }).apply({
        source: { kind: 'ModelPrice', namespace: 'team-a', name, generation },
        values,
      });
    const stored = async (key: string) => {
      const text = await storedRow(key);
      return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
    };

    it('serves a price map as its stored map with the owned entries laid over it, and lists that text', async () => {
      const store = await openStore();
      await store.set('ModelRatio', '{"mine":2,"gpt-4o":3}');
      await own('gpt', [
        { key: 'ModelRatio', entry: 'gpt-4o', number: 1.25 },
        { key: 'ModelRatio', entry: 'gpt-4o-mini', number: 0.075 },
      ]);
      await vi.waitFor(() =>
        expect(store.get('ModelRatio')).toEqual({ mine: 2, 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075 }),
      );
      expect(JSON.parse(store.getText('ModelRatio'))).toEqual({
        mine: 2,
        'gpt-4o': 1.25,
        'gpt-4o-mini': 0.075,
      });
      expect(store.list().find((o) => o.key === 'ModelRatio')?.value).toBe(store.getText('ModelRatio'));
      // The map's row is the console's: the owned entries are not written into it.
      expect(await stored('ModelRatio')).toEqual({ mine: 2, 'gpt-4o': 3 });
      const fresh = await openStore();
      expect(fresh.get('ModelRatio')).toEqual(store.get('ModelRatio'));
    });

    it('lays owned entries over the built-in default when the map has no row, and keeps them across a reset', async () => {
      const store = await openStore();
      await own('cw', [{ key: 'CreateCacheRatio', entry: 'claude-sonnet-4-5', number: 2 }]);
      await vi.waitFor(() => expect(store.get('CreateCacheRatio')).toEqual({ 'claude-sonnet-4-5': 2 }));
      await own('ratio', [{ key: 'ModelRatio', entry: 'brand-new', number: 4 }]);
      await vi.waitFor(() => expect(store.get('ModelRatio')['brand-new']).toBe(4));
      expect(store.get('ModelRatio')['gpt-4o']).toBeGreaterThan(0); // the built-in table is still there
      expect(await storedRow('ModelRatio')).toBeUndefined();
      await store.set('ModelRatio', '{"only":1,"brand-new":4}');
      expect(store.get('ModelRatio')).toEqual({ only: 1, 'brand-new': 4 });
      await store.reset('ModelRatio');
      expect(store.get('ModelRatio')['brand-new']).toBe(4);
      expect(store.get('ModelRatio').only).toBeUndefined();
    });

    it('stores a console save without the owned entries, so deleting the resource brings back the console value', async () => {
      const store = await openStore();
      await store.set('CompletionRatio', '{"m":3}');
      await own('p', [{ key: 'CompletionRatio', entry: 'm', number: 5 }]);
      await vi.waitFor(() => expect(store.get('CompletionRatio')).toEqual({ m: 5 }));
      // The console sends back the whole map it was shown, owned entry included, plus its own change.
      await store.set('CompletionRatio', JSON.stringify({ ...store.get('CompletionRatio'), other: 2 }));
      expect(await stored('CompletionRatio')).toEqual({ m: 3, other: 2 });
      expect(store.get('CompletionRatio')).toEqual({ m: 5, other: 2 });
      await own('p', undefined);
      await vi.waitFor(() => expect(store.get('CompletionRatio')).toEqual({ m: 3, other: 2 }));
      expect(await database.db.select().from(optionSources)).toEqual([]);
    });

    it('lays group entries into their group and refuses a console change to one, naming the resource', async () => {
      const store = await openStore();
      await store.set('GroupModelRatio', '{"vip":{"mine":1},"team":{"x":2}}');
      await own('vip', [
        { key: 'GroupModelRatio', entry: 'vip/gpt-4o', number: 0.5 },
        { key: 'GroupModelRatio', entry: 'svip/org/model', number: 0.25 },
      ]);
      await vi.waitFor(() =>
        expect(store.get('GroupModelRatio')).toEqual({
          vip: { mine: 1, 'gpt-4o': 0.5 },
          team: { x: 2 },
          svip: { 'org/model': 0.25 },
        }),
      );
      const current = store.getText('GroupModelRatio');
      const change = (map: Record<string, Record<string, number>>) =>
        refuseManagedOption(database.db, 'GroupModelRatio', current, JSON.stringify(map));
      const shown = store.get('GroupModelRatio') as Record<string, Record<string, number>>;
      await expect(change({ ...shown, vip: { ...shown.vip, 'gpt-4o': 9 } })).rejects.toMatchObject({
        code: 'MANAGED_BY_KUBERNETES',
        message: expect.stringContaining(
          'GroupModelRatio entry of vip/gpt-4o is managed by Kubernetes (ModelPrice team-a/vip)',
        ),
      });
      await expect(
        change({ vip: shown.vip as Record<string, number>, team: { x: 2 } }),
      ).rejects.toMatchObject({
        code: 'MANAGED_BY_KUBERNETES',
      });
      await expect(change({ ...shown, team: { x: 3 } })).resolves.toBeUndefined();
      await store.set('GroupModelRatio', JSON.stringify({ ...shown, team: { x: 3 } }));
      expect(await stored('GroupModelRatio')).toEqual({ vip: { mine: 1 }, team: { x: 3 } });
    });

    it('writes nothing and announces nothing for a resource that did not change', async () => {
      await openStore();
      const values: ManagedOptionValue[] = [{ key: 'ModelRatio', entry: 'same', number: 1 }];
      const first = await own('same', values);
      const events = bus.seen.length;
      const again = await own('same', values);
      expect(first).toMatchObject({ ok: true, changedKeys: ['ModelRatio'] });
      expect(again).toEqual({ ok: true, changedKeys: [], version: 0 });
      expect(bus.seen.length).toBe(events);
    });

    it('refuses an entry that names no group and model in a group map, writing nothing', async () => {
      const outcome = await own('bad', [
        { key: 'GroupModelRatio', entry: 'vip/ok', number: 1 },
        { key: 'GroupModelRatio', entry: 'no-group', number: 1 },
      ]);
      expect(outcome).toMatchObject({
        ok: false,
        reason: 'InvalidOption',
        message: expect.stringContaining('group/model'),
      });
      expect(await database.db.select().from(optionSources)).toEqual([]);
    });
  });
});

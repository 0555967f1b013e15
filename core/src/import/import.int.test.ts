import { DatabaseSync } from 'node:sqlite';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannelKeyBox } from '../channels/channel-key.ts';
import { hashPassword, verifyPassword } from '../crypto/password.ts';
import type { Database } from '../db/client.ts';
import { users } from '../db/schema/index.ts';
import { createSecondFactorKeys } from '../second-factors/factor-box.ts';
import { ImportRefusedError, type ImportReport, importGateway } from './importer.ts';
import { openSource } from './source.ts';
import {
  ALICE_BACKUP_CODE,
  ALICE_KEY,
  ALICE_PASSKEY,
  ALICE_TOTP_SECRET,
  createReferenceSource,
  createSqliteSource,
  NOW,
  PASSWORDS,
  type ReferenceSource,
  SOURCE_KINDS,
  type Version,
} from './testing/reference-source.ts';
import { createTargetDatabase } from './testing/target.ts';

const TABLES = [
  'users',
  'tokens',
  'channels',
  'abilities',
  'options',
  'redemptions',
  'top_ups',
  'midjourneys',
  'tasks',
  'logs',
  'quota_data',
  'setups',
  'two_fas',
  'two_fa_backup_codes',
  'passkey_credentials',
  'checkins',
  'subscription_plans',
  'user_subscriptions',
  'quota_window_usage',
] as const;
const box = createChannelKeyBox('import-test-crypto-secret-0123');
const secondFactorKeys = createSecondFactorKeys('import-test-crypto-secret-0123');
const UPSTREAM = 'http://127.0.0.1:9/v1-upstream';

type Rows = Record<string, unknown>[];
const rowsOf = (result: unknown): Rows => (Array.isArray(result) ? result : (result as { rows: Rows }).rows);

/** Row count and content digest of every table the import writes. */
async function fingerprint(database: Database): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = rowsOf(
      await database.db.execute(
        sql.raw(
          `select count(*)::text as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from "${table}" t`,
        ),
      ),
    );
    result[table] = `${row?.n}:${row?.digest}`;
  }
  return result;
}

async function select(database: Database, query: string): Promise<Rows> {
  return rowsOf(await database.db.execute(sql.raw(query)));
}

async function runImport(url: string, database: Database, extra: { dryRun?: boolean; merge?: boolean } = {}) {
  const source = await openSource(url);
  try {
    return await importGateway({
      source,
      db: database.db,
      box,
      secondFactorKeys,
      dryRun: extra.dryRun ?? false,
      merge: extra.merge ?? false,
      skipLogs: false,
      batchSize: 2,
    });
  } finally {
    await source.close();
  }
}

const tableOf = (report: ImportReport, name: string) => report.tables.find((t) => t.table === name)!;

const cases = SOURCE_KINDS.flatMap((kind) =>
  (['new-api', 'one-api'] as Version[]).map((version) => ({ kind, version })),
);
const unavailable = (kind: string) =>
  (kind === 'mysql' && !process.env.TEST_MYSQL_URL) ||
  (kind === 'postgres' && !process.env.TEST_POSTGRES_URL);

describe.each(cases)('import from $kind ($version)', ({ kind, version }) => {
  if (unavailable(kind)) {
    it.skip(`needs TEST_${kind.toUpperCase()}_URL for a ${kind} source`, () => {});
    return;
  }
  let source: ReferenceSource;
  let target: Awaited<ReturnType<typeof createTargetDatabase>>;

  beforeAll(async () => {
    source = (await createReferenceSource(kind, version, UPSTREAM))!;
    target = await createTargetDatabase();
  });
  afterAll(async () => {
    await target?.drop();
    await source?.drop();
  });

  it('a dry run reads everything, reports what it would write and writes nothing', async () => {
    const before = await fingerprint(target.database);
    const report = await runImport(source.url, target.database, { dryRun: true });
    expect(await fingerprint(target.database)).toEqual(before);
    expect(tableOf(report, 'users').written).toBe(version === 'new-api' ? 3 : 2);
    expect(tableOf(report, 'logs').written).toBe(version === 'new-api' ? 3 : 2);
    expect(tableOf(report, 'two_fas').written).toBe(version === 'new-api' ? 1 : 0);
    expect(report.flavour).toBe(version);
  });

  it('carries users with their passwords, tokens with their keys, channels with sealed keys', async () => {
    const report = await runImport(source.url, target.database);
    const [alice] = await select(target.database, `select * from users where username = 'alice'`);
    expect(alice).toMatchObject({
      id: 2,
      role: 1,
      status: 1,
      email: 'alice@example.com',
      github_id: 'gh-alice',
    });
    expect(Number(alice?.quota)).toBe(2_000_000);
    expect(Number(alice?.used_quota)).toBe(300);
    expect(alice?.request_count).toBe(7);
    expect(alice?.group).toBe('vip');
    expect(await verifyPassword(PASSWORDS.alice, String(alice?.password))).toBe(true);
    expect(await verifyPassword('wrong-password-1', String(alice?.password))).toBe(false);

    const [token] = await select(target.database, `select * from tokens where id = 1`);
    expect(token).toMatchObject({ key: ALICE_KEY, user_id: 2, name: 'laptop', model_limits_enabled: true });
    expect(Number(token?.remain_quota)).toBe(1_000_000);

    const [main] = await select(target.database, 'select * from channels where id = 1');
    expect(main?.key).not.toContain('sk-upstream');
    expect(box.open(String(main?.key))).toBe('sk-upstream');
    expect(main).toMatchObject({
      base_url: UPSTREAM,
      models: 'gpt-4o-mini',
      group: 'default,vip',
      weight: 10,
    });
    expect(Number(main?.priority)).toBe(5);
    const abilities = await select(
      target.database,
      'select "group", model from abilities where channel_id = 1 order by 1',
    );
    expect(abilities).toEqual([
      { group: 'default', model: 'gpt-4o-mini' },
      { group: 'vip', model: 'gpt-4o-mini' },
    ]);
    const [ratio] = await select(target.database, `select value from options where key = 'GroupRatio'`);
    expect(JSON.parse(String(ratio?.value))).toEqual({ default: 1, vip: 2 });
    const [setup] = await select(target.database, 'select count(*)::int as n from setups');
    expect(setup?.n).toBe(1);

    if (version === 'new-api') {
      const [bob] = await select(target.database, `select deleted_at from users where username = 'bob'`);
      expect(new Date(String(bob?.deleted_at)).toISOString()).toBe('2025-01-02T03:04:05.123Z');
      expect(alice).toMatchObject({ telegram_id: 'tg-1', linux_do_id: 'ld-1', aff_count: 2 });
      expect(Number(alice?.aff_history)).toBe(500);
      expect(Number(alice?.created_time)).toBe(NOW - 1_000_000);
      expect(JSON.parse(String(alice?.setting))).toMatchObject({ webhook_url: 'https://hooks.example/x' });
      expect(JSON.parse(String(main?.setting)).headers).toEqual({ 'X-Org': 'acme' });
      expect(main?.status_code_mapping).toBe('{"429":"500"}');
      // The multi-key channel: one channel holding every key, the disabled key disabled with its reason and time.
      const pool = await select(
        target.database,
        `select id, key, status, channel_info from channels where name like 'pool%' order by id`,
      );
      expect(pool).toHaveLength(1);
      expect(pool[0]?.id).toBe(5);
      expect(pool[0]?.status).toBe(1);
      expect(box.open(String(pool[0]?.key))).toBe('sk-k1\nsk-k2\nsk-k3');
      expect(JSON.parse(String(pool[0]?.channel_info))).toMatchObject({
        is_multi_key: true,
        multi_key_size: 3,
        multi_key_status_list: { 1: 3 },
        multi_key_disabled_reason: { 1: 'quota exceeded' },
        multi_key_disabled_time: { 1: NOW - 7200 },
        multi_key_mode: 'polling',
      });
      expect(report.unknownOptions).toEqual(['SomeForkOnlyOption']);
      expect(tableOf(report, 'users').droppedColumns.join()).toContain('discord_id');
      expect(report.uncarriedTables.join()).not.toMatch(/two_fa|passkey/);
      const [task] = await select(target.database, 'select * from tasks where id = 1');
      expect(task?.data).toEqual([{ id: 'clip-1' }]);
      const [hours] = await select(
        target.database,
        'select count(*)::int as n, sum(quota)::int as q from quota_data',
      );
      expect(hours).toEqual({ n: 2, q: 300 });
      expect(tableOf(report, 'midjourneys').written).toBe(1);
      expect(tableOf(report, 'top_ups').written).toBe(1);
      // Check-ins: every row as it was, so alice cannot check in again on the day the data is from.
      expect(tableOf(report, 'checkins').written).toBe(3);
      const days = await select(
        target.database,
        'select user_id, checkin_date, quota_awarded, created_at from checkins order by id',
      );
      expect(
        days.map((d) => [d.user_id, d.checkin_date, Number(d.quota_awarded), Number(d.created_at)]),
      ).toEqual([
        [2, '2025-10-08', 4_321, NOW - 86_400],
        [2, '2025-10-09', 1_000, NOW],
        [3, '2025-10-09', 10_000, NOW],
      ]);
      expect(report.uncarriedTables.join()).not.toContain('checkins');
      // Plans and users' subscriptions (docs/adr/0049): the plan as sold, alice's running subscription with her
      // spending of today counted in today's allowance, bob's ended one as history.
      expect(tableOf(report, 'subscription_plans').written).toBe(1);
      expect(tableOf(report, 'user_subscriptions').written).toBe(2);
      expect(report.uncarriedTables.join()).not.toMatch(/subscription_plans|user_subscriptions/);
      const [plan] = await select(target.database, 'select * from subscription_plans');
      expect(plan).toMatchObject({
        id: 4,
        title: 'Pro',
        price_amount: 20,
        duration_unit: 'month',
        stripe_price_id: 'price_1Pro',
        upgrade_group: 'vip',
        quota_reset_period: 'daily',
        enabled: true,
      });
      expect(Number(plan?.total_amount)).toBe(5_000_000);
      const subs = await select(
        target.database,
        'select id, user_id, status, source, quota_reset_period, start_time, end_time from user_subscriptions order by id',
      );
      expect(subs.map((r) => [r.id, r.user_id, r.status, r.source, r.quota_reset_period])).toEqual([
        [9, 2, 'active', 'order', 'daily'],
        [10, 3, 'expired', 'admin', 'daily'],
      ]);
      expect(subs.map((r) => Number(r.end_time))).toEqual([NOW + 3_650 * 86_400, NOW - 10 * 86_400]);
      // What alice spent in new-api's current period counts in today's allowance (a UTC day: the zone is unset).
      const today = Math.floor(Date.now() / 86_400_000) * 86_400;
      const spent = await select(
        target.database,
        'select window_key, slot_start, amount from quota_window_usage',
      );
      expect(spent.map((r) => [r.window_key, Number(r.slot_start), Number(r.amount)])).toEqual([
        ['p:9|quota:day', today, 1_234],
      ]);
    } else {
      // one-api: `models` becomes a model limit, `subnet` an IP list, a Groq channel an OpenAI one at Groq's address.
      expect(token).toMatchObject({ model_limits: 'gpt-4o-mini', allow_ips: '10.0.0.0/8\n127.0.0.1' });
      const [groq] = await select(
        target.database,
        'select type, base_url, status from channels where id = 2',
      );
      expect(groq).toEqual({ type: 1, base_url: 'https://api.groq.com/openai', status: 2 });
      const [log] = await select(target.database, 'select use_time, is_stream from logs where id = 1');
      expect(log).toEqual({ use_time: 3, is_stream: true });
      expect(tableOf(report, 'tasks').notRead).toMatch(/no such table/);
      expect(tableOf(report, 'channels').droppedColumns.join()).toContain('system_prompt');
    }
  });

  it('carries enabled TOTP factors sealed, unused backup codes and passkeys, and nothing of unfinished enrolments', async () => {
    if (version === 'one-api') {
      const report = await runImport(source.url, target.database);
      expect(tableOf(report, 'two_fas').notRead).toMatch(/no such table/);
      return;
    }
    const report = await runImport(source.url, target.database);
    // Written by this run or the one before it in this file: one of each, the rest left behind with the reason.
    const carried = (name: string) => tableOf(report, name).written + tableOf(report, name).present;
    expect(carried('two_fas')).toBe(1);
    expect(tableOf(report, 'two_fas').skipped).toEqual({
      'an enrolment never finished (it guarded nothing)': 1,
    });
    expect(carried('two_fa_backup_codes')).toBe(1);
    expect(tableOf(report, 'two_fa_backup_codes').skipped).toEqual({
      'already used in the source': 1,
      'its two-factor sign-in was not carried': 1,
    });
    expect(carried('passkey_credentials')).toBe(1);

    const factors = await select(target.database, 'select * from two_fas');
    expect(factors).toHaveLength(1);
    const [factor] = factors;
    expect(factor).toMatchObject({ user_id: 2, is_enabled: true, failed_attempts: 0 });
    expect(String(factor?.secret)).not.toContain(ALICE_TOTP_SECRET);
    expect(secondFactorKeys.openSecret(String(factor?.secret))).toBe(ALICE_TOTP_SECRET);
    // The code new-api accepted last (2025-10-09 08:00:00 UTC) and its neighbour step are not accepted again.
    expect(Number(factor?.last_used_step)).toBe(Math.floor(Date.UTC(2025, 9, 9, 8) / 30_000) + 1);

    const codes = await select(
      target.database,
      'select user_id, code_hash, used_at::int as used_at from two_fa_backup_codes',
    );
    expect(codes).toHaveLength(1);
    expect(codes[0]).toMatchObject({ user_id: 2, used_at: 0 });
    expect(await verifyPassword(ALICE_BACKUP_CODE, String(codes[0]?.code_hash))).toBe(true);

    const [passkey] = await select(
      target.database,
      'select user_id, credential_id, public_key, sign_count::int as sign_count, transports, aaguid, backup_eligible from passkey_credentials',
    );
    expect(passkey).toMatchObject({
      user_id: 2,
      credential_id: '-_-_PnqcAdLj9KW2x9jp-g',
      sign_count: ALICE_PASSKEY.signCount,
      transports: ['internal', 'hybrid'],
      aaguid: '',
      backup_eligible: true,
    });
    expect(Buffer.from(String(passkey?.public_key), 'base64url')).toEqual(
      Buffer.from(ALICE_PASSKEY.publicKeyBase64, 'base64'),
    );
  });

  it('a second run writes nothing: same counts, same content', async () => {
    const before = await fingerprint(target.database);
    const report = await runImport(source.url, target.database);
    expect(await fingerprint(target.database)).toEqual(before);
    for (const table of report.tables)
      expect({ table: table.table, written: table.written }).toEqual({ table: table.table, written: 0 });
  });

  it('the next row Turnpike adds gets an id after the imported ones', async () => {
    const [row] = await select(
      target.database,
      `insert into users (username, password) values ('after-import', 'x') returning id`,
    );
    expect(Number(row?.id)).toBeGreaterThan(version === 'new-api' ? 3 : 2);
    await target.database.db.execute(sql`delete from users where username = 'after-import'`);
  });
});

describe('the import refuses a database with users of its own', () => {
  let source: ReferenceSource;
  let target: Awaited<ReturnType<typeof createTargetDatabase>>;
  beforeAll(async () => {
    source = (await createReferenceSource('sqlite', 'new-api', UPSTREAM))!;
    target = await createTargetDatabase();
  });
  afterAll(async () => {
    await target?.drop();
    await source?.drop();
  });

  it('replaces the root of an empty setup', async () => {
    await target.database.db
      .insert(users)
      .values({ username: 'admin', password: await hashPassword('setup-pass-1'), role: 100 });
    const report = await runImport(source.url, target.database);
    expect(report.notes.join()).toMatch(/setup's root account "admin" is replaced/);
    const names = await select(target.database, 'select username from users order by id');
    expect(names.map((u) => u.username)).toEqual(['root', 'alice', 'bob']);
  });

  it('stops when a user is not from the source, and adds beside it with --merge', async () => {
    await target.database.db.execute(
      sql`insert into users (id, username, password) values (50, 'carol', 'x')`,
    );
    await target.database.db.execute(sql`update users set username = 'alice-renamed' where id = 2`);
    const before = await fingerprint(target.database);
    await expect(runImport(source.url, target.database)).rejects.toBeInstanceOf(ImportRefusedError);
    expect(await fingerprint(target.database)).toEqual(before);
    const merged = await runImport(source.url, target.database, { merge: true });
    // id 2 is now someone else: alice and everything of hers stay behind, and say so.
    expect(tableOf(merged, 'users').skipped).toEqual({ 'id held by another Turnpike user': 1 });
    expect(tableOf(merged, 'users').written).toBe(0);
    const [carol] = await select(target.database, `select username from users where id = 50`);
    expect(carol?.username).toBe('carol');
  });
});

describe('a new-api log database of its own (LOG_SQL_DSN)', () => {
  it('carries its logs to the users imported before, and nothing twice', async () => {
    const main = createSqliteSource('new-api', UPSTREAM);
    const logsOnly = createSqliteSource('new-api', UPSTREAM, ['logs']);
    const target = await createTargetDatabase();
    try {
      const source = await openSource(main.url);
      try {
        await importGateway({
          source,
          db: target.database.db,
          box,
          dryRun: false,
          merge: false,
          skipLogs: true,
        });
      } finally {
        await source.close();
      }
      expect((await select(target.database, 'select count(*)::int as n from logs'))[0]?.n).toBe(0);
      const report = await runImport(logsOnly.url, target.database);
      expect(tableOf(report, 'logs').written).toBe(3);
      expect(tableOf(report, 'users').notRead).toMatch(/no such table/);
      const again = await runImport(logsOnly.url, target.database);
      expect(tableOf(again, 'logs').written).toBe(0);
      expect((await select(target.database, 'select count(*)::int as n from logs'))[0]?.n).toBe(3);
    } finally {
      await target.drop();
    }
  });
});

describe('a catch-up run after Turnpike served traffic', () => {
  it('adds what the old gateway logged since, and leaves a log whose id Turnpike used, saying so', async () => {
    const source = createSqliteSource('new-api', UPSTREAM);
    const target = await createTargetDatabase();
    try {
      await runImport(source.url, target.database);
      // Turnpike logs a call of its own: it gets the next id, 4.
      const [own] = await select(
        target.database,
        `insert into logs (user_id, created_at, type, content) values (2, ${NOW + 10}, 2, 'served by Turnpike') returning id`,
      );
      expect(Number(own?.id)).toBe(4);
      // Meanwhile the old gateway logged two more calls, ids 4 and 5.
      const file = new DatabaseSync(source.url.replace('sqlite://', ''));
      for (const id of [4, 5])
        file
          .prepare(
            'insert into logs (id, user_id, created_at, type, content, quota) values (?, 2, ?, 2, ?, 10)',
          )
          .run(id, NOW + id, `old gateway call ${id}`);
      file.close();
      const report = await runImport(source.url, target.database);
      expect(tableOf(report, 'logs')).toMatchObject({
        source: 5,
        written: 1,
        present: 3,
        skipped: { 'its id is held by a log Turnpike wrote itself': 1 },
      });
      const contents = await select(
        target.database,
        'select id::int as id, content from logs where id >= 4 order by id',
      );
      expect(contents).toEqual([
        { id: 4, content: 'served by Turnpike' },
        { id: 5, content: 'old gateway call 5' },
      ]);
    } finally {
      await target.drop();
    }
  });
});

/**
 * Test sources: the tables of new-api and one-api as GORM's AutoMigrate creates them on SQLite, MySQL/MariaDB and
 * Postgres (`schemas/`, derived from the real models), seeded with realistic rows. Each MySQL or Postgres source is
 * a database of its own, dropped by `drop()`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';

type Dialect = 'sqlite' | 'mysql' | 'postgres';
export type Version = 'new-api' | 'one-api';

/**
 * The CREATE TABLE statements of a version on a dialect, from `schemas/<version>.<dialect>.sql`: derived from the
 * GORM models of the real repositories (each file's header names them), not from what the importer expects.
 */
function schemaOf(version: Version, dialect: Dialect): { table: string; sql: string }[] {
  const text = readFileSync(new URL(`./schemas/${version}.${dialect}.sql`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .split(';')
    .map((statement) => statement.trim())
    .filter(Boolean)
    .map((statement) => ({
      table: /^create table [`"](\w+)[`"]/i.exec(statement)?.[1] ?? '',
      sql: statement,
    }));
}

/**
 * Passwords and the hashes new-api and one-api store for them: Go's golang.org/x/crypto/bcrypt at its default cost
 * (`$2a$10$`), taken from published vectors rather than made by the bcrypt Turnpike checks them with.
 * - alice: Go's own vector, x/crypto bcrypt/bcrypt_test.go TestBcryptingIsCorrect
 *   (https://github.com/golang/crypto/blob/2e0250624f72de523298cab7d97cc5b600db2fcd/bcrypt/bcrypt_test.go).
 * - root and bob: the OpenBSD-derived vector table of jBCrypt's TestBCrypt.java (https://www.mindrot.org/projects/jBCrypt/),
 *   which Go's implementation reproduces byte for byte for `$2a$`.
 */
export const PASSWORDS = {
  alice: 'allmine',
  root: 'abcdefghijklmnopqrstuvwxyz',
  bob: '~!@#$%^&*()      ~!@#$%^&*()PNBFRD',
} as const;
const GO_BCRYPT_HASHES: Readonly<Record<keyof typeof PASSWORDS, string>> = {
  alice: '$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga',
  root: '$2a$10$fVH8e28OQRj9tqiDXs1e1uxpsjN0c7II7YPKXua2NAKYvM6iQk7dq',
  bob: '$2a$10$LgfYWkbzEvQ4JakH7rOvHe0y8pHKF9OaFgwUZ2q7W2FFZmZzJYlfS',
};
/** Alice's API key as new-api and one-api store it: 48 characters, no `sk-`. */
export const ALICE_KEY = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijkl';
export const NOW = 1_760_000_000;

/**
 * Alice's second factors as new-api stores them (model/twofa.go, model/passkey.go): the TOTP secret as base32 in the
 * clear; a backup code as bcrypt of its `XXXX-XXXX` form (made with pyca/bcrypt, the OpenBSD C implementation, not
 * the bcryptjs Turnpike checks with); a passkey's credential id, COSE public key and AAGUID as standard base64.
 * The passkey's P-256 private key (PKCS#8) is here so a test can answer as her authenticator would.
 */
export const ALICE_TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
export const ALICE_BACKUP_CODE = 'K7QX-9M2P';
export const ALICE_PASSKEY = {
  credentialIdBase64: '+/+/PnqcAdLj9KW2x9jp+g==',
  publicKeyBase64:
    'pQECAyYgASFYIO0qBfiWD7tZnzrhkp1IrBB/JPNF4DVdqlOE1V4jKKMcIlggyA9Pb6dGC9ZGawxxNQKnW2KVHNTqC/ljjHK+Lvf5TNc=',
  privateKeyPkcs8Base64:
    'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgC2N2bfKXvIwpZ8zUwkJV9yqnDGfcTk8ZDVmhY6mo7vyhRANCAATtKgX4lg+7WZ864ZKdSKwQfyTzReA1XapThNVeIyijHMgPT2+nRgvWRmsMcTUCp1tilRzU6gv5Y4xyvi73+UzX',
  signCount: 3,
} as const;
const NEW_API_BACKUP_HASHES = {
  'K7QX-9M2P': '$2a$10$zewgKS7Qyt/ILYaa0nTMM./PSkHpv/PKkZ/71MRkl7Z1dZlBPPHrS',
  'ABCD-1234': '$2a$10$Wkc4q3Qxi8IXKG2yoRZI6utvcWSsBA3uU6fwDTHNn.gcK59mfaR/K',
} as const;
const HOUR = Math.floor(NOW / 3600) * 3600;

type Row = Record<string, string | number | boolean | null>;

/** The rows of each table of a version; `upstream` is the base URL the imported channel calls. */
export function referenceRows(version: Version, upstream: string): Record<string, Row[]> {
  if (version === 'one-api') {
    return {
      users: [
        {
          id: 1,
          username: 'root',
          password: GO_BCRYPT_HASHES.root,
          display_name: 'Root User',
          role: 100,
          status: 1,
          access_token: 'aaaabbbbccccddddeeeeffff00001111',
          quota: 100_000_000,
          group: 'default',
          aff_code: 'r00t',
        },
        {
          id: 2,
          username: 'alice',
          password: GO_BCRYPT_HASHES.alice,
          display_name: 'Alice',
          role: 1,
          status: 1,
          email: 'alice@example.com',
          github_id: 'gh-alice',
          lark_id: 'lark-1',
          quota: 2_000_000,
          used_quota: 300,
          request_count: 7,
          group: 'vip',
          aff_code: 'al1c',
          inviter_id: 1,
        },
      ],
      tokens: [
        {
          id: 1,
          user_id: 2,
          key: ALICE_KEY,
          status: 1,
          name: 'laptop',
          created_time: NOW - 86_400,
          accessed_time: NOW - 60,
          expired_time: -1,
          remain_quota: 1_000_000,
          unlimited_quota: false,
          used_quota: 300,
          models: 'gpt-4o-mini',
          subnet: '10.0.0.0/8,127.0.0.1',
        },
      ],
      channels: [
        {
          id: 1,
          type: 1,
          key: 'sk-upstream',
          status: 1,
          name: 'openai main',
          weight: 10,
          created_time: NOW - 86_400,
          base_url: upstream,
          models: 'gpt-4o-mini',
          group: 'default,vip',
          used_quota: 12_345,
          model_mapping: '',
          priority: 5,
          config: '{"region":"","user_id":"org-x"}',
          system_prompt: 'be brief',
        },
        {
          id: 2,
          type: 29,
          key: 'gsk-groq',
          status: 2,
          name: 'groq',
          created_time: NOW - 86_400,
          base_url: '',
          models: 'llama3-8b-8192',
          group: 'default',
          priority: 0,
        },
      ],
      options: [
        { key: 'ModelRatio', value: '{"gpt-4o-mini":1.5}' },
        { key: 'GroupRatio', value: '{"default":1,"vip":2}' },
        { key: 'SystemName', value: 'Old Gateway' },
        { key: 'Theme', value: 'default' },
      ],
      redemptions: [
        {
          id: 1,
          user_id: 1,
          key: 'c0de0000000000000000000000000001',
          status: 1,
          name: 'welcome',
          quota: 500_000,
          created_time: NOW - 3600,
        },
      ],
      logs: [
        {
          id: 1,
          user_id: 2,
          created_at: NOW - 7200,
          type: 2,
          content: 'model ratio 1.5',
          username: 'alice',
          token_name: 'laptop',
          model_name: 'gpt-4o-mini',
          quota: 150,
          prompt_tokens: 60,
          completion_tokens: 40,
          channel_id: 1,
          request_id: 'req-one-1',
          elapsed_time: 2500,
          is_stream: true,
        },
        {
          id: 2,
          user_id: 2,
          created_at: NOW - 3600,
          type: 2,
          content: 'model ratio 1.5',
          username: 'alice',
          token_name: 'laptop',
          model_name: 'gpt-4o-mini',
          quota: 150,
          prompt_tokens: 60,
          completion_tokens: 40,
          channel_id: 1,
          request_id: '',
          elapsed_time: 900,
          is_stream: false,
        },
      ],
    };
  }
  return {
    users: [
      {
        id: 1,
        username: 'root',
        password: GO_BCRYPT_HASHES.root,
        display_name: 'Root User',
        role: 100,
        status: 1,
        access_token: 'aaaabbbbccccddddeeeeffff00001111',
        quota: 100_000_000,
        group: 'default',
        aff_code: 'r00t',
        setting: '',
      },
      {
        id: 2,
        username: 'alice',
        password: GO_BCRYPT_HASHES.alice,
        display_name: 'Alice',
        role: 1,
        status: 1,
        email: 'alice@example.com',
        github_id: 'gh-alice',
        discord_id: 'dc-1',
        telegram_id: 'tg-1',
        linux_do_id: 'ld-1',
        quota: 2_000_000,
        used_quota: 300,
        request_count: 7,
        group: 'vip',
        aff_code: 'al1c',
        aff_count: 2,
        aff_quota: 100,
        aff_history: 500,
        created_at: NOW - 1_000_000,
        inviter_id: 1,
        setting: '{"notify_type":"webhook","webhook_url":"https://hooks.example/x"}',
        remark: 'early user',
      },
      {
        id: 3,
        username: 'bob',
        password: GO_BCRYPT_HASHES.bob,
        display_name: 'Bob',
        role: 1,
        status: 1,
        quota: 10,
        group: 'default',
        aff_code: 'b0b0',
        deleted_at: '2025-01-02 03:04:05.123+00:00',
      },
    ],
    tokens: [
      {
        id: 1,
        user_id: 2,
        key: ALICE_KEY,
        status: 1,
        name: 'laptop',
        created_time: NOW - 86_400,
        accessed_time: NOW - 60,
        expired_time: -1,
        remain_quota: 1_000_000,
        unlimited_quota: false,
        model_limits_enabled: true,
        model_limits: 'gpt-4o-mini,gpt-4o',
        allow_ips: '',
        used_quota: 300,
        group: '',
      },
      {
        id: 2,
        user_id: 2,
        key: 'ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210zyxwvutsrqpo',
        status: 3,
        name: 'old',
        created_time: NOW - 900_000,
        expired_time: NOW - 86_400,
        remain_quota: 0,
        unlimited_quota: true,
        model_limits_enabled: false,
        model_limits: '',
        allow_ips: '127.0.0.1\n10.0.0.0/8',
        group: 'default',
      },
    ],
    channels: [
      {
        id: 1,
        type: 1,
        key: 'sk-upstream',
        openai_organization: null,
        test_model: 'gpt-4o-mini',
        status: 1,
        name: 'openai main',
        weight: 10,
        created_time: NOW - 86_400,
        test_time: NOW - 600,
        response_time: 420,
        base_url: upstream,
        other: '',
        balance: 3.5,
        balance_updated_time: NOW - 600,
        models: 'gpt-4o-mini',
        group: 'default,vip',
        used_quota: 12_345,
        model_mapping: '{}',
        status_code_mapping: '{"429":"500"}',
        priority: 5,
        auto_ban: 1,
        other_info: '{"status_reason":"","status_time":0}',
        tag: 'main',
        setting: '{"force_format":false}',
        param_override: '{"temperature":0.5}',
        header_override: '{"X-Org":"acme"}',
        remark: 'primary',
        channel_info:
          '{"is_multi_key":false,"multi_key_size":0,"multi_key_status_list":null,"multi_key_polling_index":0,"multi_key_mode":""}',
        settings: '{"azure_responses_version":""}',
      },
      {
        id: 5,
        type: 1,
        key: 'sk-k1\nsk-k2\nsk-k3',
        status: 1,
        name: 'pool',
        weight: 0,
        created_time: NOW - 86_400,
        base_url: upstream,
        models: 'gpt-4o',
        group: 'default',
        used_quota: 99,
        priority: 0,
        auto_ban: 1,
        channel_info: `{"is_multi_key":true,"multi_key_size":3,"multi_key_status_list":{"1":3},"multi_key_disabled_reason":{"1":"quota exceeded"},"multi_key_disabled_time":{"1":${NOW - 7200}},"multi_key_polling_index":0,"multi_key_mode":"polling"}`,
      },
    ],
    two_fas: [
      {
        id: 1,
        user_id: 2,
        secret: ALICE_TOTP_SECRET,
        is_enabled: true,
        failed_attempts: 1,
        last_used_at: '2025-10-09 08:00:00.000+00:00',
        created_at: '2025-06-01 10:00:00.000+00:00',
        updated_at: '2025-10-09 08:00:00.000+00:00',
      },
      // root began an enrolment and never finished it: it guarded nothing.
      {
        id: 2,
        user_id: 1,
        secret: 'KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU',
        is_enabled: false,
        failed_attempts: 0,
      },
    ],
    two_fa_backup_codes: [
      { id: 1, user_id: 2, code_hash: NEW_API_BACKUP_HASHES['K7QX-9M2P'], is_used: false },
      {
        id: 2,
        user_id: 2,
        code_hash: NEW_API_BACKUP_HASHES['ABCD-1234'],
        is_used: true,
        used_at: '2025-09-01 10:00:00.000+00:00',
      },
      { id: 3, user_id: 1, code_hash: NEW_API_BACKUP_HASHES['ABCD-1234'], is_used: false },
    ],
    passkey_credentials: [
      {
        id: 1,
        user_id: 2,
        credential_id: ALICE_PASSKEY.credentialIdBase64,
        public_key: ALICE_PASSKEY.publicKeyBase64,
        attestation_type: 'none',
        aaguid: 'AAAAAAAAAAAAAAAAAAAAAA==',
        sign_count: ALICE_PASSKEY.signCount,
        clone_warning: false,
        user_present: true,
        user_verified: true,
        backup_eligible: true,
        backup_state: true,
        transports: '["internal","hybrid"]',
        attachment: 'platform',
        last_used_at: '2025-10-01 09:00:00.000+00:00',
        created_at: '2025-06-01 10:00:00.000+00:00',
      },
    ],
    options: [
      { key: 'ModelRatio', value: '{"gpt-4o-mini":1.5,"gpt-4o":2.5}' },
      { key: 'CompletionRatio', value: '{"gpt-4o-mini":4}' },
      { key: 'GroupRatio', value: '{"default":1,"vip":2}' },
      { key: 'SystemName', value: 'Old Gateway' },
      { key: 'QuotaForNewUser', value: '5000' },
      { key: 'SomeForkOnlyOption', value: 'x' },
    ],
    redemptions: [
      {
        id: 1,
        user_id: 1,
        key: 'c0de0000000000000000000000000001',
        status: 1,
        name: 'welcome',
        quota: 500_000,
        created_time: NOW - 3600,
        redeemed_time: 0,
        used_user_id: 0,
        expired_time: 0,
      },
      {
        id: 2,
        user_id: 1,
        key: 'c0de0000000000000000000000000002',
        status: 3,
        name: 'welcome',
        quota: 500_000,
        created_time: NOW - 3600,
        redeemed_time: NOW - 1800,
        used_user_id: 2,
        expired_time: 0,
      },
    ],
    top_ups: [
      {
        id: 1,
        user_id: 2,
        amount: 10,
        money: 73,
        trade_no: 'USR2NO0001',
        payment_method: 'alipay',
        create_time: NOW - 5000,
        complete_time: NOW - 4990,
        status: 'success',
      },
    ],
    midjourneys: [
      {
        id: 1,
        code: 1,
        user_id: 2,
        action: 'IMAGINE',
        mj_id: '1712345678901234',
        prompt: 'a cat',
        prompt_en: 'a cat',
        description: 'ok',
        state: '',
        submit_time: (NOW - 4000) * 1000,
        start_time: (NOW - 3990) * 1000,
        finish_time: (NOW - 3900) * 1000,
        image_url: 'https://cdn.example/cat.png',
        video_url: '',
        status: 'SUCCESS',
        progress: '100%',
        fail_reason: '',
        channel_id: 1,
        quota: 50_000,
        buttons: '[]',
        properties: '{}',
      },
    ],
    tasks: [
      {
        id: 1,
        created_at: NOW - 3000,
        updated_at: NOW - 2900,
        task_id: 'suno-task-1',
        platform: 'suno',
        user_id: 2,
        group: 'vip',
        channel_id: 1,
        quota: 20_000,
        action: 'MUSIC',
        status: 'SUCCESS',
        fail_reason: '',
        submit_time: NOW - 3000,
        start_time: NOW - 2990,
        finish_time: NOW - 2900,
        progress: '100%',
        properties: '{"input":"a song"}',
        private_data: '{}',
        data: '[{"id":"clip-1"}]',
      },
    ],
    logs: [
      {
        id: 1,
        user_id: 2,
        created_at: NOW - 7200,
        type: 2,
        content: 'model ratio 1.5',
        username: 'alice',
        token_name: 'laptop',
        model_name: 'gpt-4o-mini',
        quota: 150,
        prompt_tokens: 60,
        completion_tokens: 40,
        use_time: 2,
        is_stream: true,
        channel_id: 1,
        token_id: 1,
        group: 'vip',
        ip: '203.0.113.5',
        other: '{"model_ratio":1.5,"group_ratio":2}',
      },
      {
        id: 2,
        user_id: 2,
        created_at: NOW - 3600,
        type: 2,
        content: 'model ratio 1.5',
        username: 'alice',
        token_name: 'laptop',
        model_name: 'gpt-4o-mini',
        quota: 150,
        prompt_tokens: 60,
        completion_tokens: 40,
        use_time: 1,
        is_stream: false,
        channel_id: 1,
        token_id: 1,
        group: 'vip',
        ip: '203.0.113.5',
        other: '{}',
      },
      {
        id: 3,
        user_id: 2,
        created_at: NOW - 4990,
        type: 1,
        content: 'top-up $10',
        username: 'alice',
        quota: 5_000_000,
        is_stream: false,
        channel_id: 0,
        token_id: 0,
      },
    ],
    quota_data: [
      {
        id: 1,
        user_id: 2,
        username: 'alice',
        model_name: 'gpt-4o-mini',
        created_at: HOUR - 7200,
        token_used: 100,
        count: 1,
        quota: 150,
      },
      {
        id: 2,
        user_id: 2,
        username: 'alice',
        model_name: 'gpt-4o-mini',
        created_at: HOUR - 3600,
        token_used: 100,
        count: 1,
        quota: 150,
      },
    ],
    // Two days of alice's check-ins (the second the day the data is from) and one of bob's.
    checkins: [
      { id: 1, user_id: 2, checkin_date: '2025-10-08', quota_awarded: 4_321, created_at: NOW - 86_400 },
      { id: 2, user_id: 2, checkin_date: '2025-10-09', quota_awarded: 1_000, created_at: NOW },
      { id: 3, user_id: 3, checkin_date: '2025-10-09', quota_awarded: 10_000, created_at: NOW },
    ],
    setups: [{ id: 1, version: 'v1.0.0', initialized_at: NOW - 900_000 }],
    // A plan of 5,000,000 quota a day, moving its buyers to vip; alice holds one for ten years (1,234 spent in
    // today's period), bob held one and it ended.
    subscription_plans: [
      {
        id: 4,
        title: 'Pro',
        subtitle: 'daily allowance',
        price_amount: 20,
        currency: 'USD',
        duration_unit: 'month',
        duration_value: 1,
        custom_seconds: 0,
        enabled: 1,
        sort_order: 2,
        allow_balance_pay: 1,
        stripe_price_id: 'price_1Pro',
        creem_product_id: '',
        max_purchase_per_user: 0,
        upgrade_group: 'vip',
        total_amount: 5_000_000,
        quota_reset_period: 'daily',
        quota_reset_custom_seconds: 0,
        created_at: NOW - 900_000,
        updated_at: NOW - 900_000,
      },
    ],
    user_subscriptions: [
      {
        id: 9,
        user_id: 2,
        plan_id: 4,
        amount_total: 5_000_000,
        amount_used: 1_234,
        start_time: NOW - 86_400,
        end_time: NOW + 3_650 * 86_400,
        status: 'active',
        source: 'order',
        last_reset_time: NOW - 3_600,
        next_reset_time: NOW + 82_800,
        upgrade_group: 'vip',
        prev_user_group: 'default',
        created_at: NOW - 86_400,
        updated_at: NOW - 3_600,
      },
      {
        id: 10,
        user_id: 3,
        plan_id: 4,
        amount_total: 5_000_000,
        amount_used: 0,
        start_time: NOW - 40 * 86_400,
        end_time: NOW - 10 * 86_400,
        status: 'expired',
        source: 'admin',
        last_reset_time: 0,
        next_reset_time: 0,
        upgrade_group: 'vip',
        prev_user_group: 'default',
        created_at: NOW - 40 * 86_400,
        updated_at: NOW - 10 * 86_400,
      },
    ],
  };
}

export interface ReferenceSource {
  /** The URL to import from. */
  readonly url: string;
  drop(): Promise<void>;
}

function insertSql(dialect: Dialect, table: string, row: Row): { text: string; values: unknown[] } {
  const q = (n: string) => (dialect === 'mysql' ? `\`${n}\`` : `"${n}"`);
  const names = Object.keys(row);
  const marks = names.map((_, i) => (dialect === 'postgres' ? `$${i + 1}` : '?'));
  const values = Object.values(row).map((v) => {
    if (typeof v === 'boolean' && dialect !== 'postgres') return v ? 1 : 0;
    // MySQL's datetime(3) holds no zone: GORM writes UTC there.
    if (dialect === 'mysql' && typeof v === 'string' && /^\d{4}-\d\d-\d\d \d\d:.*\+00:00$/.test(v))
      return v.slice(0, -6);
    return v;
  });
  return {
    text: `insert into ${q(table)} (${names.map(q).join(', ')}) values (${marks.join(', ')})`,
    values,
  };
}

/** A SQLite file of `version`, seeded. */
export function createSqliteSource(
  version: Version,
  upstream: string,
  only?: readonly string[],
): ReferenceSource {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'turnpike-import-')), 'one-api.db');
  const db = new DatabaseSync(file);
  const wanted = (table: string) => !only || only.includes(table);
  for (const { table, sql } of schemaOf(version, 'sqlite')) if (wanted(table)) db.exec(sql);
  for (const [table, rows] of Object.entries(referenceRows(version, upstream)))
    for (const row of wanted(table) ? rows : []) {
      const { text, values } = insertSql('sqlite', table, row);
      db.prepare(text).run(...(values as (string | number | null)[]));
    }
  db.close();
  return { url: `sqlite://${file}`, drop: async () => {} };
}

/** A MariaDB/MySQL database of its own on TEST_MYSQL_URL's server, seeded. */
export async function createMysqlSource(
  base: string,
  version: Version,
  upstream: string,
): Promise<ReferenceSource> {
  const name = `turnpike_src_${randomBytes(5).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: base });
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await mysql.createConnection({ uri: url.toString() });
  for (const { sql } of schemaOf(version, 'mysql')) await db.query(sql);
  for (const [table, rows] of Object.entries(referenceRows(version, upstream)))
    for (const row of rows) {
      const { text, values } = insertSql('mysql', table, row);
      await db.query(text, values);
    }
  await db.end();
  return {
    url: url.toString(),
    async drop() {
      const c = await mysql.createConnection({ uri: base });
      await c.query(`drop database if exists ${name}`);
      await c.end();
    },
  };
}

/** A Postgres database of its own on TEST_POSTGRES_URL's server, seeded. */
export async function createPostgresSource(
  base: string,
  version: Version,
  upstream: string,
): Promise<ReferenceSource> {
  const name = `turnpike_src_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  const tables = schemaOf(version, 'postgres');
  for (const { sql } of tables) await db.query(sql);
  for (const [table, rows] of Object.entries(referenceRows(version, upstream)))
    for (const row of rows) {
      const { text, values } = insertSql('postgres', table, row);
      await db.query(text, values);
    }
  // GORM's serial ids follow the rows it wrote.
  for (const { table, sql } of tables)
    if (sql.includes('"id" bigserial'))
      await db.query(
        `select setval(pg_get_serial_sequence('"${table}"', 'id'), greatest((select coalesce(max(id), 0) from "${table}"), 1))`,
      );
  await db.end();
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** A seeded source of each kind available here: SQLite always, MySQL and Postgres when their URLs are set. */
export const SOURCE_KINDS = ['sqlite', 'mysql', 'postgres'] as const;

export async function createReferenceSource(
  kind: (typeof SOURCE_KINDS)[number],
  version: Version,
  upstream: string,
): Promise<ReferenceSource | undefined> {
  if (kind === 'sqlite') return createSqliteSource(version, upstream);
  if (kind === 'mysql')
    return process.env.TEST_MYSQL_URL
      ? createMysqlSource(process.env.TEST_MYSQL_URL, version, upstream)
      : undefined;
  return process.env.TEST_POSTGRES_URL
    ? createPostgresSource(process.env.TEST_POSTGRES_URL, version, upstream)
    : undefined;
}

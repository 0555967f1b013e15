/**
 * `TEST_POSTGRES_URL=postgres://… node bench/log-write-cost.ts`: what each consume log costs Postgres to write
 * (issue 28). Builds a database of its own on that server (the checkout's migrations, 200 users, 1,400 tokens,
 * 20 channels and `LOGWRITE_ROWS` logs, 1,000,000 by default, loaded as bench/console-logs.ts does), copies it once
 * (`create database … template`) and writes flushes of `LOGWRITE_BATCH` (50) settled calls into the copy through the
 * relay writer's own `writeRecords`, on one connection, reading that backend's CPU time from `/proc/<pid>/stat` (the
 * server must run on this host). Each variant of the table (as it is, each secondary index left out in turn, the
 * sums' trigger off, the trigram index's pending list set otherwise, the indexes before and after migration 0014)
 * gets `LOGWRITE_FLUSHES` (200) flushes per round; the rounds interleave the variants, so the host's load falls on
 * all alike, and the median per log is printed. An index is left out by marking it not ready (`pg_index.indisready`,
 * as `DROP INDEX CONCURRENTLY` does before it drops one): inserts skip it and the same copy switches back, which is
 * why the copy is thrown away afterwards. The trigram index's pending list is emptied before a variant's flushes and
 * again after them, inside the measurement, so each variant pays the cleanup its own inserts deferred.
 * `LOGWRITE_VARIANTS=a,b` measures only those; `LOGWRITE_KEEP=1` keeps the loaded template for the next run. Not a
 * test.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createDb, type Database } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { LogType } from '@turnpike/core/domain/logs';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { type SettlementRecord, writeRecords } from '../relay/src/books/write-records.ts';

const ROWS = Number(process.env.LOGWRITE_ROWS ?? 1_000_000);
const FLUSHES = Number(process.env.LOGWRITE_FLUSHES ?? 40);
const BATCH = Number(process.env.LOGWRITE_BATCH ?? 50);
const ROUNDS = Number(process.env.LOGWRITE_ROUNDS ?? 8);
const WARMUP = Number(process.env.LOGWRITE_WARMUP ?? 200);
const USERS = 200;
const TOKENS = 1400;
const CHANNELS = 20;
const MODELS = 50;
const TEMPLATE = 'log_write_cost_base';
const TICKS_PER_SECOND = 100;

const base = process.env.TEST_POSTGRES_URL;
if (!base) throw new Error('needs TEST_POSTGRES_URL (a Postgres server on this host)');

const urlOf = (name: string) => {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
};

const SECONDARY_INDEXES = [
  'created_at_type',
  'type_created_at',
  'other_types_created_at',
  'user_id_created_at',
  'username_created_at',
  'model_name_pattern_created_at',
  'token_id_created_at',
  'token_name_created_at',
  'channel_id_created_at',
  'group_created_at',
  'request_id',
  'search_trgm',
].map((name) => `idx_logs_${name}`);
const SUMS_TRIGGER = 'logs_sums_insert';

/**
 * A variant of the table: the indexes its inserts skip (marked not ready, as `DROP INDEX CONCURRENTLY` does before
 * it drops one, so the same database switches between variants), whether the sums' trigger fires, and the trigram
 * index's pending list.
 */
interface Variant {
  readonly skipped?: readonly string[];
  /** Skips exactly `skipped`: the indexes the run added to the template are kept too. */
  readonly exact?: boolean;
  readonly noSums?: boolean;
  readonly gin?: string;
}

const VARIANTS: Record<string, Variant> = {
  'as is': {},
  ...Object.fromEntries(SECONDARY_INDEXES.map((name) => [`no ${name}`, { skipped: [name] }])),
  'trigram fastupdate off': { gin: 'fastupdate = off' },
  'trigram pending list 32 MB': { gin: 'gin_pending_list_limit = 32768' },
  'no sums trigger': { noSums: true },
  // Migration 0014: the type index of every type and the request id's index, or the type index of the other types.
  'before 0014': { skipped: ['idx_logs_other_types_created_at'], exact: true },
  'after 0014': { skipped: ['idx_logs_type_created_at', 'idx_logs_request_id'], exact: true },
  'no secondary index nor sums': { skipped: SECONDARY_INDEXES, noSums: true },
};

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const exists = (name: string) =>
  admin(async (c) => (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1);

/** The loaded template: migrations, accounts and `ROWS` logs, vacuumed (as autovacuum leaves a table). */
async function buildTemplate(): Promise<void> {
  await admin((c) => c.query(`drop database if exists ${TEMPLATE}`));
  await admin((c) => c.query(`create database ${TEMPLATE}`));
  const database = await createDb({ url: urlOf(TEMPLATE), maxConnections: 1 });
  try {
    await migrate(database);
    const { db } = database;
    await db.execute(
      sql.raw(`insert into users (id, username, password, quota)
        select g, 'user' || g, 'x', 1000000000000 from generate_series(1, ${USERS}) g`),
    );
    await db.execute(
      sql.raw(`insert into tokens (id, user_id, key, name, remain_quota)
        select g, 1 + g % ${USERS}, 'key-' || g, 'token-' || (g % 7), 1000000000000 from generate_series(1, ${TOKENS}) g`),
    );
    await db.execute(
      sql.raw(
        `insert into channels (id, name, key) select g, 'channel-' || g, 'k' from generate_series(1, ${CHANNELS}) g`,
      ),
    );
    const now = Math.floor(Date.now() / 1000);
    const step = (90 * 86_400) / ROWS;
    for (let first = 1; first <= ROWS; first += 1_000_000) {
      const last = Math.min(ROWS, first + 999_999);
      await db.execute(
        sql.raw(`
        insert into logs (user_id, created_at, type, content, username, token_name, model_name, quota,
          prompt_tokens, completion_tokens, use_time, is_stream, channel_id, token_id, "group", ip, request_id, other)
        select 1 + (g % ${USERS}), ${now - 90 * 86_400} + floor(g * ${step})::bigint,
          case when g % 97 = 0 then 5 else 2 end,
          case when g % 97 = 0 then 'upstream error ' || (g % 1000)
            else 'model ratio ' || (g % 30) || '.00, completion ratio 4.00, group ratio 1.00' end,
          'user' || (1 + g % ${USERS}), 'token-' || (g % 7), 'model-' || (g % ${MODELS}),
          (g % 5000) + 10, (g % 2000) + 10, (g % 500) + 1, g % 30, g % 3 = 0, 1 + (g % ${CHANNELS}),
          1 + (g % ${TOKENS}), 'default', '10.0.' || (g % 250) || '.' || (g % 200), gen_random_uuid()::text,
          '{"model_ratio":1,"group_ratio":1,"completion_ratio":4,"cache_tokens":0,"frt":-1000,"admin_info":{"use_channel":["' || (1 + g % ${CHANNELS}) || '"]}}'
        from generate_series(${first}, ${last}) g`),
      );
      process.stdout.write(`  loaded ${last} logs\n`);
    }
    await db.execute(sql`select setval('logs_id_seq', (select max(id) from logs))`);
    for (const table of ['logs', 'log_days', 'log_hours', 'users', 'tokens', 'channels'])
      await db.execute(sql.raw(`vacuum analyze ${table}`));
  } finally {
    await database.close();
  }
}

let seq = 0;
/** One flush's settled calls, as the relay's settle step makes them (settle.ts): spread over users and tokens. */
function batch(): SettlementRecord[] {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: BATCH }, () => {
    seq += 1;
    const tokenId = 1 + ((seq * 7919) % TOKENS);
    const userId = 1 + (tokenId % USERS);
    const channelId = 1 + (seq % CHANNELS);
    const quota = 10 + (seq % 5000);
    return {
      journal: 'log-write-cost',
      seq,
      dashboard: true,
      at: Date.now(),
      write: {
        userId,
        tokenId,
        channelId,
        quota,
        countRequest: true,
        debit: { quota, fromToken: true },
        log: {
          userId,
          createdAt: now,
          type: LogType.Consume,
          content: `model ratio ${(seq % 30).toFixed(2)}, completion ratio 4.00, group ratio 1.00`,
          username: `user${userId}`,
          tokenName: `token-${tokenId % 7}`,
          modelName: `model-${seq % MODELS}`,
          quota,
          promptTokens: 10 + (seq % 2000),
          completionTokens: 10 + (seq % 500),
          useTime: seq % 30,
          isStream: seq % 3 === 0,
          channelId,
          tokenId,
          group: 'default',
          ip: `10.0.${seq % 250}.${seq % 200}`,
          requestId: randomUUID(),
          other: JSON.stringify({
            model_ratio: 1,
            group_ratio: 1,
            completion_ratio: 4,
            cache_tokens: 0,
            cache_ratio: 1,
            model_price: -1,
            frt: 250 + (seq % 900),
            admin_info: { use_channel: [String(channelId)] },
          }),
        },
      },
    };
  });
}

/** User plus system CPU seconds a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Backend CPU microseconds per log: of the flushes, and of the pending-list cleanup they left. */
interface Cost {
  readonly flushes: number;
  readonly cleanup: number;
}

/** Empties the trigram index's pending list when the table has the index. */
async function cleanPending(database: Database): Promise<void> {
  await database.db.execute(
    sql`select gin_clean_pending_list(c.oid) from pg_class c where c.relname = 'idx_logs_search_trgm'`,
  );
}

/** Puts the copy in a variant's shape (only indexes the checkout's table has). */
async function shape(database: Database, variant: Variant, added: readonly string[]): Promise<void> {
  const { db } = database;
  const skipped = `{${[...(variant.skipped ?? []), ...(variant.exact ? [] : added)].join(',')}}`;
  await db.execute(sql`update pg_index i set indisready = not (c.relname = any(${skipped}::text[]))
    from pg_class c where c.oid = i.indexrelid and i.indrelid = 'logs'::regclass and c.relname like 'idx_logs_%'`);
  await db.execute(
    sql.raw(`alter table logs ${variant.noSums ? 'disable' : 'enable'} trigger ${SUMS_TRIGGER}`),
  );
  const trigram = (await db.execute(
    sql`select 1 from pg_class where relname = 'idx_logs_search_trgm'`,
  )) as unknown as { rows: unknown[] };
  if (trigram.rows.length === 0) return;
  await db.execute(sql`alter index idx_logs_search_trgm reset (fastupdate, gin_pending_list_limit)`);
  if (variant.gin) await db.execute(sql.raw(`alter index idx_logs_search_trgm set (${variant.gin})`));
}

/**
 * Backend CPU per log of one variant: `FLUSHES` flushes, then the cleanup of the pending list they left (emptied
 * before, unmeasured, so each variant pays for its own rows).
 */
async function measure(
  database: Database,
  pid: number,
  variant: Variant,
  added: readonly string[],
): Promise<Cost> {
  await shape(database, variant, added);
  await cleanPending(database);
  const before = cpuSeconds(pid);
  for (let i = 0; i < FLUSHES; i += 1) await writeRecords(database.db, batch());
  const flushed = cpuSeconds(pid);
  await cleanPending(database);
  const cleaned = cpuSeconds(pid);
  const perLog = (seconds: number) => (seconds * 1e6) / (FLUSHES * BATCH);
  return { flushes: perLog(flushed - before), cleanup: perLog(cleaned - flushed) };
}

const chosen = process.env.LOGWRITE_VARIANTS?.split(',').map((v) => v.trim()) ?? Object.keys(VARIANTS);
for (const variant of chosen) if (!VARIANTS[variant]) throw new Error(`unknown variant ${variant}`);
if (process.env.LOGWRITE_KEEP !== '1' || !(await exists(TEMPLATE))) await buildTemplate();
// One copy of the template for every variant: the rounds interleave them, so the host's load falls on all alike.
const copy = `${TEMPLATE}_copy`;
await admin((c) => c.query(`drop database if exists ${copy} with (force)`));
await admin((c) => c.query(`create database ${copy} template ${TEMPLATE}`));
const database = await createDb({ url: urlOf(copy), maxConnections: 1 });
// The indexes of the logs before and after migration 0014 side by side, whichever the template was made with; the
// ones added here are skipped but by the variants that name them.
const MIGRATION_0014: Record<string, string> = {
  idx_logs_type_created_at: 'on logs (type, created_at)',
  idx_logs_request_id: 'on logs (request_id)',
  idx_logs_other_types_created_at: 'on logs (type, created_at) where type <> 2',
};
const made = (await database.db.execute(
  sql`select relname from pg_class where relname like 'idx_logs_%' and relkind = 'i'`,
)) as unknown as { rows: { relname: string }[] };
const added = Object.keys(MIGRATION_0014).filter((name) => !made.rows.some((row) => row.relname === name));
for (const name of added) await database.db.execute(sql.raw(`create index ${name} ${MIGRATION_0014[name]}`));
const totalOf = (cost: Cost) => cost.flushes + cost.cleanup;
/** Per variant: its phases' cost per log, and each one's difference from the mean of the "as is" phases beside it. */
const results = new Map<string, { totals: number[]; deltas: number[]; cleanups: number[] }>();
const record = (name: string, total: number, delta: number, cleanup: number) => {
  const entry = results.get(name) ?? { totals: [], deltas: [], cleanups: [] };
  entry.totals.push(total);
  entry.deltas.push(delta);
  entry.cleanups.push(cleanup);
  results.set(name, entry);
};
try {
  const indexes = new Set(made.rows.map((row) => row.relname));
  // A variant without one index is measured when the template's table has that index.
  const skipsAbsent = (variant: Variant) =>
    variant.skipped?.length === 1 && !indexes.has(variant.skipped[0] ?? '');
  const others = chosen.filter((name) => name !== 'as is' && !skipsAbsent(VARIANTS[name] as Variant));
  const pidRows = (await database.db.execute(sql`select pg_backend_pid() as pid`)) as unknown as {
    rows: { pid: number }[];
  };
  const pid = Number(pidRows.rows[0]?.pid);
  for (let i = 0; i < WARMUP; i += 1) await writeRecords(database.db, batch());
  const asIs = () => measure(database, pid, VARIANTS['as is'] as Variant, added);
  // "As is" between every two variants, so each variant is compared with the table as it is just before and after.
  let previous = totalOf(await asIs());
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const name of others) {
      const cost = await measure(database, pid, VARIANTS[name] as Variant, added);
      const next = totalOf(await asIs());
      record(name, totalOf(cost), totalOf(cost) - (previous + next) / 2, cost.cleanup);
      record('as is', next, 0, 0);
      previous = next;
    }
    process.stdout.write(`  round ${round} of ${ROUNDS} done\n`);
  }
  const again = (await database.db.execute(sql`select pg_backend_pid() as pid`)) as unknown as {
    rows: { pid: number }[];
  };
  if (Number(again.rows[0]?.pid) !== pid) throw new Error('the connection changed while measuring');
} finally {
  await database.close();
  await admin((c) => c.query(`drop database if exists ${copy} with (force)`));
}
process.stdout.write(
  `\nbackend CPU per log (µs), ${FLUSHES} flushes of ${BATCH} per phase over ${ROWS}+ logs, ${ROUNDS} rounds: median per phase, and median difference from the "as is" phases beside it (with its interquartile range):\n`,
);
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)] ?? 0;
for (const [name, entry] of results) {
  const spread =
    name === 'as is'
      ? ''
      : `${quantile(entry.deltas, 0.5).toFixed(1).padStart(7)}  [${quantile(entry.deltas, 0.25).toFixed(1)}, ${quantile(entry.deltas, 0.75).toFixed(1)}]`;
  process.stdout.write(
    `  ${name.padEnd(44)} ${quantile(entry.totals, 0.5).toFixed(1).padStart(7)} ${spread}\n`,
  );
}
if (process.env.LOGWRITE_KEEP !== '1') await admin((c) => c.query(`drop database if exists ${TEMPLATE}`));
process.exit(0);

/**
 * `BENCH_LOGS=5000000 make bench`: the console's log views at scale (issue 28). Loads the rows itself into a fresh
 * database on `TEST_POSTGRES_URL`'s server (one `INSERT ... SELECT` over `generate_series` per million: 200 users,
 * 50 models, 90 days, newest last as a relay writes them; the dashboard's hourly `quota_data` rows aggregated from
 * them), then asks the console API for each view five times (`app.inject`, signed in as root or as one of the 200
 * users) and prints the median. The database is dropped afterwards, unless `BENCH_LOGS_DB=<name>` names a database to
 * keep: loaded on the first run, reused as it is by the next ones (the migrations of the checkout apply to it at boot,
 * so one load measures before and after a change). Not a test. `BENCH_LOGS_MODEL_INDEX=plain` puts back the model index
 * as it was before migration 0011, for a before/after.
 */
import { ConsoleClient, createTestApp, ROOT, registerUser, setupRoot } from '@turnpike/api/testing/test-app';
import { sql } from 'drizzle-orm';
import pg from 'pg';

const ROWS = Number(process.env.BENCH_LOGS);
const USERS = 200;
const MODELS = 50;
const DAYS = 90;
const REPEAT = 5;
const CHUNK = 1_000_000;

if (!Number.isInteger(ROWS) || ROWS <= 0) throw new Error('BENCH_LOGS must be a whole number of rows');
if (!process.env.TEST_POSTGRES_URL) throw new Error('BENCH_LOGS needs TEST_POSTGRES_URL (a Postgres server)');

const KEPT = process.env.BENCH_LOGS_DB;
if (KEPT !== undefined && !/^[a-z_][a-z0-9_]*$/.test(KEPT))
  throw new Error('BENCH_LOGS_DB must be a plain name');

/** The URL of the kept database, created when absent; whether it already holds a loaded run. */
async function keptDatabase(name: string): Promise<{ url: string; loaded: boolean }> {
  const base = process.env.TEST_POSTGRES_URL as string;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const probe = new pg.Client({ connectionString: url.toString() });
  await probe.connect();
  try {
    const marked = await probe.query(`select to_regclass('public.bench_loaded') is not null as loaded`);
    return { url: url.toString(), loaded: marked.rows[0].loaded === true };
  } finally {
    await probe.end();
  }
}

const started = performance.now();
const kept = KEPT === undefined ? undefined : await keptDatabase(KEPT);
const t = await createTestApp(kept ? { databaseUrl: kept.url } : {});
try {
  const { db } = t.runtime.deps;
  if (kept?.loaded) {
    process.stdout.write(`  reusing the logs loaded in ${KEPT}\n`);
    await vacuum();
  } else await load();
  const root = new ConsoleClient(t.app);
  if (!(await root.login(ROOT.username, ROOT.password)).json().success) throw new Error('root login failed');
  const self = new ConsoleClient(t.app);
  if (!(await self.login('bench-self', 'user-password-1')).json().success)
    throw new Error('user login failed');
  const selfId = self.userId as number;
  const marked = (await db.execute(sql`select now_seconds from bench_loaded`)) as {
    rows: { now_seconds: string }[];
  };
  const [mark] = marked.rows;
  // The views are asked relative to the moment the rows were loaded, so a kept database answers the same views.
  const now = Number(mark?.now_seconds);
  process.stdout.write(`  ready in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

  // The last `count` days up to the moment of the load: a range whose ends fall inside an hour and a day.
  const days = (count: number) => `start_timestamp=${now - count * 86_400}&end_timestamp=${now}`;
  const day = (daysAgo: number) =>
    `start_timestamp=${now - daysAgo * 86_400}&end_timestamp=${now - (daysAgo - 1) * 86_400}`;
  const views: [string, typeof root, string][] = [
    ['admin: newest logs', root, '/api/log/?p=1&page_size=10&type=0'],
    ['admin: one day, 85 days back', root, `/api/log/?p=1&page_size=10&type=0&${day(85)}`],
    ['admin: page 50', root, '/api/log/?p=50&page_size=10&type=0'],
    ['admin: one user', root, `/api/log/?p=1&page_size=10&type=0&username=user${selfId + 17}`],
    ['admin: one model', root, '/api/log/?p=1&page_size=10&type=0&model_name=model-7'],
    ['admin: models by prefix', root, '/api/log/?p=1&page_size=10&type=0&model_name=model-49%25'],
    ['admin: totals', root, '/api/log/stat?type=0'],
    ['admin: totals of a user', root, `/api/log/stat?type=0&username=user${selfId + 17}`],
    ['admin: totals of a model', root, '/api/log/stat?type=0&model_name=model-7'],
    ['admin: totals of a channel', root, '/api/log/stat?type=0&channel=3'],
    ['admin: totals of a token name', root, '/api/log/stat?type=0&token_name=token-3'],
    ['admin: totals of a group', root, '/api/log/stat?type=0&group=default'],
    ['admin: totals, 7 days', root, `/api/log/stat?type=0&${days(7)}`],
    ['admin: totals of a group, 7 days', root, `/api/log/stat?type=0&group=default&${days(7)}`],
    ['admin: error logs', root, '/api/log/?p=1&page_size=10&type=5'],
    ['admin: consume logs', root, '/api/log/?p=1&page_size=10&type=2'],
    ['admin: consume logs, one day back', root, `/api/log/?p=1&page_size=10&type=2&${day(85)}`],
    ['admin: logs of a channel', root, '/api/log/?p=1&page_size=10&type=0&channel=3'],
    ['admin: keyword search', root, '/api/log/search?keyword=upstream%20error%20999&p=1&page_size=10'],
    ['admin: keyword, 1 row in 7', root, '/api/log/search?keyword=token-3&p=1&page_size=10'],
    ['user: my keyword search', self, '/api/log/self/search?keyword=error%2099&p=1&page_size=10'],
    ['admin: dashboard, 7 days', root, `/api/data/?start_timestamp=${now - 7 * 86_400}&end_timestamp=${now}`],
    ['user: my newest logs', self, '/api/log/self?p=1&page_size=10&type=0'],
    ['user: one day, 85 days back', self, `/api/log/self?p=1&page_size=10&type=0&${day(85)}`],
    ['user: my totals', self, '/api/log/self/stat?type=0'],
    [
      'user: my dashboard, 7 days',
      self,
      `/api/data/self?start_timestamp=${now - 7 * 86_400}&end_timestamp=${now}`,
    ],
  ];
  process.stdout.write(`\nconsole views over ${ROWS} logs (median of ${REPEAT}, ms):\n`);
  for (const [name, client, url] of views) {
    const times: number[] = [];
    for (let i = 0; i < REPEAT; i += 1) {
      const begun = performance.now();
      const response = await client.get(url);
      times.push(performance.now() - begun);
      if (!response.json().success) throw new Error(`${name}: ${response.body.slice(0, 300)}`);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(REPEAT / 2)] as number;
    process.stdout.write(`  ${name.padEnd(32)} ${median.toFixed(1).padStart(9)}   ${url}\n`);
  }
} finally {
  await t.close();
}
process.stdout.write(`\nconsole bench took ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
process.exit(0);

/** Signs up root and the bench user, loads the rows and marks the database as loaded. */
async function load(): Promise<void> {
  const { db } = t.runtime.deps;
  await setupRoot(t.app);
  const self = await registerUser(t.app, 'bench-self');
  const selfId = self.userId as number;
  const now = Math.floor(Date.now() / 1000);
  const from = now - DAYS * 86_400;
  const step = (DAYS * 86_400) / ROWS;
  // User ids are spread over 200 values, one of them the signed-in user's, so "my logs" has 1/200 of the rows.
  for (let first = 1; first <= ROWS; first += CHUNK) {
    const last = Math.min(ROWS, first + CHUNK - 1);
    // Numbers only, made here: written into the statement (generate_series wants them typed, not as parameters).
    await db.execute(
      sql.raw(`
      insert into logs (user_id, created_at, type, content, username, token_name, model_name, quota,
        prompt_tokens, completion_tokens, use_time, is_stream, channel_id, token_id, "group", ip, request_id, other)
      select ${selfId} + (g % ${USERS}), ${from} + floor(g * ${step})::bigint,
        case when g % 97 = 0 then 5 else 2 end,
        case when g % 97 = 0 then 'upstream error ' || (g % 1000) else '' end,
        'user' || (${selfId} + (g % ${USERS})), 'token-' || (g % 7), 'model-' || (g % ${MODELS}),
        (g % 5000) + 10, (g % 2000) + 10, (g % 500) + 1, g % 30, g % 3 = 0, 1 + (g % 20), 1 + (g % 1400),
        'default', '10.0.' || (g % 250) || '.' || (g % 200), 'bench-' || g, '{"model_ratio":1}'
      from generate_series(${first}, ${last}) g`),
    );
    process.stdout.write(`  loaded ${last} logs (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  await db.execute(sql`
    insert into quota_data (user_id, username, model_name, created_at, token_used, count, quota)
    select user_id, username, model_name, created_at - created_at % 3600, sum(prompt_tokens + completion_tokens),
      count(*), sum(quota)
    from logs where type = 2 group by user_id, username, model_name, created_at - created_at % 3600`);
  if (process.env.BENCH_LOGS_MODEL_INDEX === 'plain') {
    // The model index as it was before migration 0011, to measure what that migration changed.
    await db.execute(sql`drop index idx_logs_model_name_pattern_created_at`);
    await db.execute(sql`create index idx_logs_model_name_created_at on logs (model_name, created_at)`);
  }
  await vacuum();
  await db.execute(sql.raw(`create table bench_loaded as select ${now}::bigint as now_seconds`));
}

/**
 * `vacuum analyze` of the tables the views read, as autovacuum does after a large insert (PostgreSQL 13+ vacuums on
 * inserts too): the statistics, and the visibility map that lets an index-only scan count without the heap.
 */
async function vacuum(): Promise<void> {
  const { db } = t.runtime.deps;
  for (const table of ['logs', 'log_hours', 'quota_data'])
    await db.execute(sql.raw(`vacuum analyze ${table}`));
}

/**
 * Read-only access to the database of a new-api or one-api gateway: SQLite (node:sqlite), MySQL/MariaDB (mysql2)
 * or Postgres (pg). Every reader answers the same plain rows (column name -> driver value) and lists the tables
 * and columns that exist, so the importer reads whatever schema version it finds. Nothing here ever writes.
 */
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';

export type SourceRow = Record<string, unknown>;
export type SourceKind = 'sqlite' | 'mysql' | 'postgres';

export interface PageQuery {
  /** Rows with an id above this one, in id order. */
  readonly afterId: number;
  readonly limit: number;
  /** Only rows whose `created_at` (Unix seconds) is at or after this. */
  readonly createdSince?: number | undefined;
}

export interface SourceReader {
  readonly kind: SourceKind;
  /** Table name -> its column names, for every table of the source. */
  schema(): Promise<Map<string, Set<string>>>;
  count(table: string, createdSince?: number): Promise<number>;
  /** The highest id of a table; 0 when it is empty. */
  maxId(table: string): Promise<number>;
  /** Every row of a small table (options, channels). */
  all(table: string, columns: readonly string[]): Promise<SourceRow[]>;
  /** One page of a table keyed by `id`, for tables too large to hold at once. */
  page(table: string, columns: readonly string[], query: PageQuery): Promise<SourceRow[]>;
  close(): Promise<void>;
}

/** `sqlite:///abs/path.db`, `sqlite:relative.db`, `mysql://…`, `postgres://…` or `postgresql://…`. */
export function sourceKindOf(url: string): SourceKind | undefined {
  if (/^sqlite:/i.test(url)) return 'sqlite';
  if (/^mysql:\/\//i.test(url)) return 'mysql';
  if (/^postgres(ql)?:\/\//i.test(url)) return 'postgres';
  return undefined;
}

/** The source's URL with its password masked, for reports. */
export function describeSource(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

export async function openSource(url: string): Promise<SourceReader> {
  const kind = sourceKindOf(url);
  // one-api's SQLITE_PATH style (`one-api.db?_busy_timeout=5000`): the query is for its driver, not a file name.
  if (kind === 'sqlite') return openSqlite(url.replace(/^sqlite:(\/\/)?/i, '').replace(/\?.*$/, ''));
  if (kind === 'mysql') return openMysql(url);
  if (kind === 'postgres') return openPostgres(url);
  throw new Error('the source must be a sqlite:///path, mysql://user:pass@host:3306/db or postgres:// URL');
}

type Quote = (name: string) => string;
const doubleQuote: Quote = (name) => `"${name.replaceAll('"', '""')}"`;
const backQuote: Quote = (name) => `\`${name.replaceAll('`', '``')}\``;

/** The SELECT of one page; `?` placeholders, renumbered for Postgres by the caller. */
function pageSql(quote: Quote, table: string, columns: readonly string[], query: PageQuery): string {
  const since = query.createdSince === undefined ? '' : ` and ${quote('created_at')} >= ?`;
  return `select ${columns.map(quote).join(', ')} from ${quote(table)} where ${quote('id')} > ?${since} order by ${quote('id')} limit ?`;
}

function pageParams(query: PageQuery): number[] {
  return query.createdSince === undefined
    ? [query.afterId, query.limit]
    : [query.afterId, query.createdSince, query.limit];
}

function countSql(quote: Quote, table: string, createdSince: number | undefined): string {
  const since = createdSince === undefined ? '' : ` where ${quote('created_at')} >= ?`;
  return `select count(*) as n from ${quote(table)}${since}`;
}

const maxIdSql = (quote: Quote, table: string) => `select max(${quote('id')}) as m from ${quote(table)}`;

function openSqlite(file: string): SourceReader {
  const db = new DatabaseSync(decodeURIComponent(file), { readOnly: true });
  const quote = doubleQuote;
  return {
    kind: 'sqlite',
    async schema() {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all() as { name: string }[];
      const result = new Map<string, Set<string>>();
      for (const { name } of tables) {
        const columns = db.prepare(`pragma table_info(${quote(name)})`).all() as { name: string }[];
        result.set(name, new Set(columns.map((c) => c.name)));
      }
      return result;
    },
    async count(table, createdSince) {
      const params = createdSince === undefined ? [] : [createdSince];
      const row = db.prepare(countSql(quote, table, createdSince)).get(...params) as { n: number };
      return Number(row.n);
    },
    async maxId(table) {
      const row = db.prepare(maxIdSql(quote, table)).get() as { m: number | null };
      return Number(row.m ?? 0);
    },
    async all(table, columns) {
      return db.prepare(`select ${columns.map(quote).join(', ')} from ${quote(table)}`).all() as SourceRow[];
    },
    async page(table, columns, query) {
      return db.prepare(pageSql(quote, table, columns, query)).all(...pageParams(query)) as SourceRow[];
    },
    async close() {
      db.close();
    },
  };
}

async function openMysql(url: string): Promise<SourceReader> {
  const connection = await mysql.createConnection({
    uri: url,
    supportBigNumbers: true,
    dateStrings: true,
    timezone: 'Z',
  });
  // A guard on top of only ever selecting: the session refuses writes.
  await connection.query('set session transaction read only');
  const quote = backQuote;
  const select = async (sqlText: string, params: unknown[] = []) =>
    (await connection.query(sqlText, params))[0] as SourceRow[];
  return sqlReader('mysql', quote, select, 'database()', () => connection.end());
}

async function openPostgres(url: string): Promise<SourceReader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('set session characteristics as transaction read only');
  const quote = doubleQuote;
  const numbered = (sqlText: string) => {
    let n = 0;
    return sqlText.replaceAll('?', () => `$${++n}`);
  };
  const select = async (sqlText: string, params: unknown[] = []) =>
    (await client.query(numbered(sqlText), params)).rows as SourceRow[];
  return sqlReader('postgres', quote, select, 'current_schema()', () => client.end());
}

/** A reader over a SQL server's `select`, with its identifier quoting and the function naming its schema. */
function sqlReader(
  kind: 'mysql' | 'postgres',
  quote: (name: string) => string,
  select: (sqlText: string, params?: unknown[]) => Promise<SourceRow[]>,
  currentSchema: string,
  close: () => Promise<void>,
): SourceReader {
  return {
    kind,
    async schema() {
      const rows = await select(
        `select table_name as t, column_name as c from information_schema.columns where table_schema = ${currentSchema}`,
      );
      return groupColumns(rows);
    },
    async count(table, createdSince) {
      const [row] = await select(
        countSql(quote, table, createdSince),
        createdSince === undefined ? [] : [createdSince],
      );
      return Number(row?.n ?? 0);
    },
    async maxId(table) {
      const [row] = await select(maxIdSql(quote, table));
      return Number(row?.m ?? 0);
    },
    all: (table, columns) => select(`select ${columns.map(quote).join(', ')} from ${quote(table)}`),
    page: (table, columns, query) => select(pageSql(quote, table, columns, query), pageParams(query)),
    close,
  };
}

function groupColumns(rows: SourceRow[]): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  for (const row of rows) {
    // information_schema answers upper-case keys on some MySQL versions.
    const table = String(row.t ?? row.T);
    const column = String(row.c ?? row.C);
    if (!result.has(table)) result.set(table, new Set());
    result.get(table)?.add(column);
  }
  return result;
}

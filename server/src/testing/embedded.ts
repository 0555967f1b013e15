/**
 * The embedded default (`make run`: PGlite in DATA_DIR, no Redis) as a real `node server/src/main.ts`, with one
 * channel to a fake upstream, a per-call price set through the console API, and a payer whose key is unlimited (the
 * balance is the user's): for the tests that crash it, fill its disk, and read its books afterwards.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createDb, type Database } from '@turnpike/core/db/client';
import { migrate } from '@turnpike/core/db/migrate';
import { generateTokenKey } from '@turnpike/core/domain/tokens';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { freePort } from '@turnpike/core/testing/free-port';
import { sql } from 'drizzle-orm';
import { consoleApi, signInAsRoot, startServerProcess, waitUntilReady } from './cluster.ts';

export interface EmbeddedServer {
  readonly server: ReturnType<typeof startServerProcess>;
  readonly payer: { readonly userId: number; readonly key: string };
  /** The folder's database, for a test to read once the server has stopped (it holds the lock while it runs). */
  openDatabase(): Promise<Database>;
}

/**
 * Starts the embedded server on `dataDir`, sets up root, a channel serving `model` from `upstreamUrl` and its price
 * (`usdPerCall`), then, while the server is stopped, a payer with `balance`; resolves once it is ready again.
 */
export async function startEmbeddedServer(options: {
  readonly dataDir: string;
  readonly upstreamUrl: string;
  readonly model: string;
  readonly usdPerCall: number;
  readonly balance: number;
}): Promise<EmbeddedServer> {
  const secret = randomBytes(16).toString('hex');
  const server = startServerProcess('embedded', await freePort(), {
    DATA_DIR: options.dataDir,
    SESSION_SECRET: `session-${secret}`,
    CRYPTO_SECRET: `crypto-${secret}`,
    LOG_LEVEL: 'warn',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    // The test's own Postgres and Redis are not this server's: it runs on the embedded default.
    DATABASE_URL: '',
    REDIS_URL: '',
  });
  await waitUntilReady(server.url, 90_000, () => server.child() === undefined);
  const admin = await signInAsRoot(server.url, { username: 'root', password: 'embedded-root-pw-1' });
  const api = consoleApi(
    () => server.url,
    () => admin,
  );
  await api('POST', '/api/channel/', {
    name: 'fake upstream',
    type: 1,
    key: 'sk-upstream',
    base_url: options.upstreamUrl,
    models: options.model,
    group: 'default',
  });
  await api('PUT', '/api/option/', {
    key: 'ModelPrice',
    value: JSON.stringify({ [options.model]: options.usdPerCall }),
  });
  // The payer and their key are written while the server is stopped (it holds the folder's lock while it runs).
  const exit = await server.signal('SIGTERM');
  if (exit !== 0) throw new Error(`the embedded server exited ${exit} on SIGTERM: ${server.output()}`);
  const openDatabase = () => createDb({ dataDir: path.join(options.dataDir, 'db') });
  const database = await openDatabase();
  let payer: EmbeddedServer['payer'];
  try {
    await migrate(database);
    const user = await createUserRepo(database.db).insert({
      username: `payer-${randomBytes(4).toString('hex')}`,
      password: 'not-a-real-hash',
      quota: options.balance,
    });
    const token = await createTokenRepo(database.db).insert({
      userId: user.id,
      key: generateTokenKey(),
      name: 'payer',
      remainQuota: 0,
      unlimitedQuota: true,
    });
    payer = { userId: user.id, key: `sk-${token.key}` };
  } finally {
    await database.close();
  }
  await server.restart();
  return { server, payer, openDatabase };
}

/** What the database says a user paid for consume calls: balance, counters, and their logs. */
export interface ConsumeBooks {
  readonly quota: number;
  readonly usedQuota: number;
  readonly requestCount: number;
  /** Sum of the consume logs' quota, and how many there are. */
  readonly logged: number;
  readonly logs: number;
  /** Consume logs whose quota is not `perCall`. */
  readonly offPrice: number;
  readonly requestIds: readonly string[];
  /** Request ids logged more than once. */
  readonly duplicates: number;
}

export async function readConsumeBooks(
  database: Database,
  userId: number,
  perCall: number,
): Promise<ConsumeBooks> {
  const { rows } = (await database.db.execute(
    sql`select u.quota, u.used_quota, u.request_count,
          (select coalesce(sum(quota), 0) from logs where user_id = u.id and type = 2) as logged,
          (select count(*) from logs where user_id = u.id and type = 2) as logs,
          (select count(*) from logs where user_id = u.id and type = 2 and quota <> ${perCall}) as off_price,
          (select array_agg(request_id) from logs where user_id = u.id and type = 2) as request_ids,
          (select count(*) from (select 1 from logs where user_id = u.id and type = 2
                                  group by request_id having count(*) > 1) d) as duplicates
       from users u where u.id = ${userId}`,
  )) as unknown as {
    rows: {
      quota: number;
      used_quota: number;
      request_count: number;
      logged: string;
      logs: string;
      off_price: string;
      request_ids: string[] | null;
      duplicates: string;
    }[];
  };
  const row = rows[0];
  if (!row) throw new Error(`user ${userId} is gone`);
  return {
    quota: Number(row.quota),
    usedQuota: Number(row.used_quota),
    requestCount: Number(row.request_count),
    logged: Number(row.logged),
    logs: Number(row.logs),
    offPrice: Number(row.off_price),
    requestIds: row.request_ids ?? [],
    duplicates: Number(row.duplicates),
  };
}

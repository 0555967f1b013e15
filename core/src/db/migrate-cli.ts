/**
 * `node core/src/db/migrate-cli.ts`: applies the committed migrations to `DATABASE_URL` and exits (0 when the
 * schema is current, 1 on failure). The Helm chart runs it as a pre-install/pre-upgrade Job (Argo CD PreSync), so
 * new pods start against a migrated schema; `migrate()` takes an advisory lock, so servers that also migrate at
 * boot do not race it. It writes one JSON log line in the servers' (pino's) shape. While the database is
 * unreachable (an outage, a failover during an upgrade) it waits for it, saying so once per change, within the
 * Job's `activeDeadlineSeconds`, instead of failing the upgrade at once.
 */
import { loadConfig } from '../config.ts';
import { createDb } from './client.ts';
import { migrate } from './migrate.ts';
import { waitForDatabase } from './wait-for-database.ts';

const log = (level: number, msg: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg, ...fields })}\n`);

try {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set: nothing to migrate');
  const startedAt = performance.now();
  const database = await createDb({ url: config.databaseUrl, maxConnections: 1 });
  try {
    await waitForDatabase(() => migrate(database), {
      onStateChange: (state) =>
        state.state === 'waiting'
          ? log(40, 'the database is unreachable: waiting for it', { reason: state.reason })
          : log(30, 'the database answers', { waitedMs: state.waitedMs }),
    });
  } finally {
    await database.close();
  }
  log(30, 'database schema is current', { ms: Math.round(performance.now() - startedAt) });
} catch (error) {
  log(60, 'migration failed', { err: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
}

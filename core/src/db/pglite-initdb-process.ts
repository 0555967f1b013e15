/**
 * The process that makes a new data folder (started by pglite-initdb.ts): it receives the setup, opens PGlite on
 * the folder (which runs `initdb`), applies the migrations, closes the database cleanly, answers, and exits, so
 * that everything the making touched is given back to the system before the serving thread opens the folder.
 */

import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { migrationsFolder } from './migrate.ts';
import { serializeError } from './pglite-errors.ts';
import type { InitdbReply } from './pglite-initdb.ts';
import { pgliteOptionsOf } from './pglite-options.ts';
import type { ThreadSetup } from './pglite-thread.ts';

/** The parent is gone (its lock with it): stop rather than write a folder another process may now take. */
process.once('disconnect', () => process.exit(1));

async function make(setup: ThreadSetup & { dataDir: string }): Promise<InitdbReply> {
  try {
    const client = new PGlite(setup.dataDir, pgliteOptionsOf(setup));
    await client.waitReady;
    try {
      await migrate(drizzle({ client }), { migrationsFolder });
    } finally {
      await client.close();
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  }
}

process.once('message', async (setup: ThreadSetup & { dataDir: string }) => {
  const reply = await make(setup);
  process.removeAllListeners('disconnect');
  process.send?.(reply, () => process.exit(reply.ok ? 0 : 1));
});

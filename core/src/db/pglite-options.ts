import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { ThreadSetup } from './pglite-thread.ts';

/**
 * PGlite's options for a setup: the same for the process that makes a new data folder (pglite-initdb.ts) and the
 * thread that serves it (pglite-worker.ts). pg_trgm: the keyword search's trigram index (migration 0012,
 * docs/adr/0031).
 */
export const pgliteOptionsOf = (setup: ThreadSetup): PGliteOptions => ({
  startParams: [...PGlite.defaultStartParams, ...setup.extraStartParams],
  extensions: { pg_trgm },
});

/**
 * A new data folder is made (Postgres's `initdb`, then the migrations) in a short-lived process of its own
 * (pglite-initdb-process.ts), and only then opened by the thread that serves it (pglite-thread.ts).
 *
 * Why a process: making a database runs a second WebAssembly instance (`initdb`) and every migration in the
 * thread that does it, and what that leaves resident stays for the life of the process whatever is freed:
 * WebAssembly memory is never given back, and the C library keeps the pages of the thread's own malloc arena
 * (~40 MiB after `initdb`) even after the thread has ended. An idle all-in-one process on a new folder held
 * 330-380 MiB against 283-306 on a folder made earlier (bench/README.md "Memory", ADR 0036). A process's memory is
 * all given back when it exits.
 */

import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorOf, type SerializedError } from './pglite-errors.ts';
import type { ThreadSetup } from './pglite-thread.ts';

/** What the process answers: made (and migrated), or the error that stopped it. */
export type InitdbReply = { ok: true } | { ok: false; error: SerializedError };

/** A folder PGlite would run `initdb` in: it has no database yet (PGlite decides by the same file). */
export const isNewDataDir = (dataDir: string): boolean => !existsSync(path.join(dataDir, 'PG_VERSION'));

/**
 * Makes the database in `setup.dataDir` and applies the migrations, in a process of its own; resolves once that
 * process has closed the database cleanly and exited. Rejects with its error (its `code` kept), or when it ended
 * without saying (killed). The caller holds the folder's lock throughout (data-dir.ts); the process ends itself
 * if this one goes away, so it never writes a folder whose lock has been given up.
 */
export function makeDataDir(setup: ThreadSetup & { dataDir: string }): Promise<void> {
  const child = fork(fileURLToPath(new URL('./pglite-initdb-process.ts', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise<void>((resolve, reject) => {
    let reply: InitdbReply | undefined;
    child.once('message', (message: InitdbReply) => {
      reply = message;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (reply?.ok && code === 0) resolve();
      else if (reply && !reply.ok) reject(errorOf(reply.error));
      else
        reject(
          new Error(
            `the process making the embedded database ended without finishing (${signal ?? `exit code ${code}`})`,
          ),
        );
    });
    child.send(setup);
  });
}

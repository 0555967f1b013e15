/**
 * The embedded database's folder (`DATA_DIR/db`) is one process's: PGlite itself takes no lock, and two processes
 * writing the same files corrupt them. A lock file beside the folder (`db.lock`, the owner's pid and host) is
 * taken at start; a folder that is locked, unwritable or full is a clear error naming DATA_DIR, raised before
 * PGlite opens it, instead of a crash with a stack trace later.
 */

import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

/** A data folder this process cannot use: a misconfiguration, so the process stops with `exitCode`. */
export class DataDirError extends Error {
  /** sysexits EX_CONFIG / EX_CANTCREAT: the process should not be restarted in a loop for it to go away. */
  readonly exitCode: number;
  readonly dataDir: string;
  constructor(message: string, dataDir: string, options: { cause?: unknown; exitCode?: number } = {}) {
    super(message, { cause: options.cause });
    this.name = 'DataDirError';
    this.dataDir = dataDir;
    this.exitCode = options.exitCode ?? 78;
  }
}

export const isDataDirError = (error: unknown): error is DataDirError => error instanceof DataDirError;

const DISK_CODES: Record<string, string> = {
  EACCES: 'is not writable by this process (permission denied)',
  EPERM: 'is not writable by this process (operation not permitted)',
  EROFS: 'is on a read-only file system',
  ENOSPC: 'is on a full disk (no space left on device)',
  EDQUOT: 'is over its disk quota',
  ENOTDIR: 'is not a folder',
};

/** A file-system failure under `dir` as a DataDirError naming DATA_DIR, or undefined if it is not one. */
export function dataDirErrorOf(error: unknown, dir: string): DataDirError | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  const what = typeof code === 'string' ? DISK_CODES[code] : undefined;
  if (!what) return undefined;
  return new DataDirError(
    `the data folder ${dir} (DATA_DIR) ${what}: set DATA_DIR to a writable folder with free space, or DATABASE_URL to a Postgres server`,
    dir,
    { cause: error, exitCode: 73 },
  );
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Creates `dir` and takes its lock; returns the release. Throws DataDirError when another live process on this
 * host holds the folder, or when the folder cannot be written. A lock left by a process that is gone (a crash, a
 * previous container) is taken over.
 */
export async function lockDataDir(dir: string): Promise<() => void> {
  const lockPath = `${dir.replace(/[\\/]+$/, '')}.lock`;
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw dataDirErrorOf(error, dir) ?? error;
  }
  const mine = `${process.pid} ${hostname()}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw dataDirErrorOf(error, dir) ?? error;
      const [pidText, host] = readFileSync(lockPath, 'utf8').trim().split(/\s+/);
      const pid = Number(pidText);
      // Another process on this host, still running. (pid 1 of an earlier container is this process's own pid.)
      if (host === hostname() && Number.isInteger(pid) && pid !== process.pid && isAlive(pid))
        throw new DataDirError(
          `the embedded database folder ${dir} (DATA_DIR) is in use by process ${pid}: each process needs a DATA_DIR of its own (or share a Postgres server through DATABASE_URL)`,
          dir,
        );
      rmSync(lockPath, { force: true });
      continue;
    }
    try {
      // Writing the lock also proves the disk takes writes (a full disk fails here, not in PGlite).
      writeSync(fd, mine);
    } catch (error) {
      closeSync(fd);
      rmSync(lockPath, { force: true });
      throw dataDirErrorOf(error, dir) ?? error;
    }
    closeSync(fd);
    return () => {
      try {
        if (readFileSync(lockPath, 'utf8') === mine) rmSync(lockPath, { force: true });
      } catch {
        // Already gone.
      }
    };
  }
  throw new DataDirError(`could not take the lock of the embedded database folder ${dir}`, path.resolve(dir));
}

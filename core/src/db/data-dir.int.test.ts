import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirError, lockDataDir } from './data-dir.ts';

const freshDir = async () => path.join(await mkdtemp(path.join(tmpdir(), 'turnpike-lock-')), 'db');

describe('the embedded database folder lock', () => {
  it('is taken at start and given back at close', async () => {
    const dir = await freshDir();
    const release = await lockDataDir(dir);
    expect(await readFile(`${dir}.lock`, 'utf8')).toBe(`${process.pid} ${hostname()}\n`);
    release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
  });

  it('refuses a folder another live process of this host holds, naming it and DATA_DIR', async () => {
    const dir = await freshDir();
    await lockDataDir(dir);
    // The parent process (vitest's) stands in for a second server on the same DATA_DIR.
    await writeFile(`${dir}.lock`, `${process.ppid} ${hostname()}\n`);
    const refused = await lockDataDir(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirError);
    expect((refused as DataDirError).exitCode).toBe(78);
    expect((refused as Error).message).toContain(`${dir} (DATA_DIR) is in use by process ${process.ppid}`);
  });

  it('takes over a lock its owner left behind (a crash, an earlier container)', async () => {
    const dir = await freshDir();
    await lockDataDir(dir);
    // A pid no process has (above the kernel's default pid_max).
    await writeFile(`${dir}.lock`, `4194305 ${hostname()}\n`);
    const release = await lockDataDir(dir);
    expect(await readFile(`${dir}.lock`, 'utf8')).toBe(`${process.pid} ${hostname()}\n`);
    release();
  });

  it('says a folder under a file cannot be used, with exit code 73', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'turnpike-lock-')), 'file');
    await writeFile(file, '');
    const refused = await lockDataDir(path.join(file, 'db')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirError);
    expect((refused as DataDirError).exitCode).toBe(73);
    expect((refused as Error).message).toContain('(DATA_DIR) is not a folder');
  });
});

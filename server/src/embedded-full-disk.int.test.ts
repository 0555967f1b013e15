/**
 * The embedded default (`make run`: PGlite in DATA_DIR, no Redis) when the disk under DATA_DIR fills up: a paid
 * call is never served unbilled. While nothing can be written (neither the database nor the spool of settled
 * calls, docs/adr/0022), paid calls are refused with a 503 and `Retry-After` in the caller's protocol, `/readyz`
 * says why, and the process keeps running; once space is freed, calls are admitted again and the books are exact:
 * every answered call logged once, balance drop = consume logs = used quota.
 *
 * DATA_DIR is a small tmpfs the test mounts (it runs as root, as CI does); where mounting is refused the test is
 * skipped with that reason, except under CI, where it fails. The price is a per-call price set through the console
 * API ($0.002 a call = 1000 quota units at the documented 500000 units per USD).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statfsSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedServer, readConsumeBooks, startEmbeddedServer } from './testing/embedded.ts';

/** $0.002 a call at 500000 units per USD. */
const PER_CALL = 1000;
const START_BALANCE = 10_000 * PER_CALL;
/** Room for the embedded database (about 40 MB once migrated) and a little more. */
const DISK = '96m';

/** Mounts a tmpfs of `size` at a new folder; the reason when it cannot. */
async function mountSmallDisk(size: string): Promise<{ dir: string } | { refused: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'turnpike-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { refused: stderr || (error as Error).message };
  }
}

/** Writes `file` until the disk refuses more (ENOSPC); at most `limit` bytes, so a disk that never fills ends. */
function fillDisk(file: string, limit: number): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1024 * 1024, 1);
  let written = 0;
  try {
    while (written < limit) {
      try {
        written += writeSync(fd, chunk, 0, chunk.length);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          // The last pages: smaller writes until not one byte more fits.
          for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 2))
            for (;;) {
              try {
                written += writeSync(fd, chunk, 0, size);
              } catch {
                break;
              }
            }
          return written;
        }
        throw error;
      }
    }
    throw new Error(`the disk took ${limit} bytes without filling up`);
  } finally {
    closeSync(fd);
  }
}

const mounted = await mountSmallDisk(DISK);
const refusedReason = 'refused' in mounted ? mounted.refused : undefined;
if (refusedReason && process.env.CI) throw new Error(`mount -t tmpfs is refused under CI: ${refusedReason}`);

describe.skipIf(refusedReason !== undefined)(
  `the embedded default on a full disk${refusedReason ? ` (skipped: mount -t tmpfs refused: ${refusedReason})` : ''}`,
  () => {
    const dataDir = 'dir' in mounted ? mounted.dir : '';
    const filler = path.join(dataDir, 'filler');
    let upstream: FakeOpenAi;
    let embedded: EmbeddedServer;

    beforeAll(async () => {
      upstream = await startFakeOpenAi({});
      embedded = await startEmbeddedServer({
        dataDir,
        upstreamUrl: upstream.url,
        model: 'disk-model',
        usdPerCall: 0.002,
        balance: START_BALANCE,
      });
    }, 180_000);

    afterAll(async () => {
      await embedded?.server.kill();
      await upstream?.close();
      if (dataDir) {
        execFileSync('umount', [dataDir]);
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    const chat = async () => {
      const response = await fetch(`${embedded.server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${embedded.payer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'disk-model', messages: [{ role: 'user', content: 'hello' }] }),
      });
      return {
        status: response.status,
        body: await response.text(),
        id: response.headers.get('x-request-id') ?? '',
        retryAfter: response.headers.get('retry-after'),
      };
    };
    const readyz = async () => {
      const response = await fetch(`${embedded.server.url}/readyz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    /** /readyz until `isDone` accepts it or 5 s have passed (then the last answer). */
    const readyzUntil = async (isDone: (r: Awaited<ReturnType<typeof readyz>>) => boolean) => {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const r = await readyz();
        if (isDone(r) || Date.now() > deadline) return r;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    it('refuses paid calls with a 503 while nothing can be written, says so on /readyz, and bills every answered call once the disk has room', async () => {
      const answered: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const a = await chat();
        expect(a.status, a.body).toBe(200);
        answered.push(a.id);
      }

      const filled = fillDisk(filler, 512 * 1024 * 1024);
      const whileFull: { status: number; body: string }[] = [];
      for (let i = 0; i < 40; i += 1) {
        const a = await chat();
        whileFull.push({ status: a.status, body: a.body });
        if (a.status === 200) answered.push(a.id);
        else {
          // Refused in OpenAI's shape, with a time to come back, never served.
          expect(a.status, a.body).toBe(503);
          expect(Number(a.retryAfter)).toBeGreaterThan(0);
          expect(JSON.parse(a.body)).toMatchObject({
            error: { type: 'server_error', code: expect.any(String), message: expect.any(String) },
          });
        }
      }
      // /readyz asks its dependencies at most once a second: read until it has asked since the disk filled.
      const ready = await readyzUntil((r) => r.body.status !== 'ready');
      const statuses = whileFull.map((a) => a.status);
      const disk = statfsSync(dataDir);
      const figures = JSON.stringify({ filled, statuses, ready, free: disk.bavail * disk.bsize });
      expect(statuses.filter((s) => s === 503).length, figures).toBeGreaterThan(0);
      expect(ready.body.status, figures).toBe('degraded');
      expect(JSON.stringify(ready.body.degraded), figures).toMatch(/disk|space|ENOSPC/i);
      expect(embedded.server.child(), 'the server is still running').toBeDefined();

      // Space again: calls are admitted within a few seconds.
      await rm(filler);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const a = await chat();
        if (a.status === 200) {
          answered.push(a.id);
          break;
        }
        if (Date.now() > deadline) throw new Error(`still refused 30 s after the disk had room: ${a.body}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      for (let i = 0; i < 5; i += 1) {
        const a = await chat();
        expect(a.status, a.body).toBe(200);
        answered.push(a.id);
      }
      expect((await readyzUntil((r) => r.body.status === 'ready')).status).toBe(200);

      // A graceful stop writes what is queued and frees the folder for the test to read.
      expect(await embedded.server.signal('SIGTERM')).toBe(0);
      const database = await embedded.openDatabase();
      try {
        const books = await readConsumeBooks(database, embedded.payer.userId, PER_CALL);
        const logged = new Set(books.requestIds);
        expect(
          answered.filter((id) => !logged.has(id)),
          'answered calls never logged',
        ).toEqual([]);
        expect(books.duplicates, 'calls logged twice').toBe(0);
        expect({
          logs: books.logs,
          deducted: START_BALANCE - books.quota,
          logged: books.logged,
          usedQuota: books.usedQuota,
          requests: books.requestCount,
        }).toEqual({
          logs: answered.length,
          deducted: answered.length * PER_CALL,
          logged: answered.length * PER_CALL,
          usedQuota: answered.length * PER_CALL,
          requests: answered.length,
        });
      } finally {
        await database.close();
      }
    }, 180_000);
  },
);

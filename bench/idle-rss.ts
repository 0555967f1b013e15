/**
 * The idle memory and the start time of the server itself (bench/README.md "Memory"), as production starts it:
 * `node <IDLE_NODE_ARGS> <entry>` with `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536`, one process at a time.
 * Each reading starts a fresh process (on a fresh database created on `TEST_POSTGRES_URL`'s server and dropped
 * afterwards, or on an empty embedded data directory with `IDLE_DATABASE=embedded`), notes when it logs
 * "turnpike is ready", reads VmRSS (and its anonymous and file-backed parts) from /proc after `IDLE_SECONDS` (15),
 * then stops it. RSS does not depend on the host's load; the start time does.
 *
 * `node bench/idle-rss.ts <entry> [<entry> ...]` (server/src/main.ts, server/dist/main.js), settings ROLE (relay),
 * IDLE_READINGS (3), IDLE_SECONDS (15), IDLE_DATABASE (postgres when TEST_POSTGRES_URL is set), IDLE_NODE_ARGS
 * (`--max-semi-space-size=16`). Not a test.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabaseUrl } from '@turnpike/core/testing/test-runtime';

const ROLE = process.env.ROLE ?? 'relay';
const READINGS = Number(process.env.IDLE_READINGS ?? 3);
const SECONDS = Number(process.env.IDLE_SECONDS ?? 15);
const EMBEDDED = process.env.IDLE_DATABASE === 'embedded' || !process.env.TEST_POSTGRES_URL;
const NODE_ARGS = (process.env.IDLE_NODE_ARGS ?? '--max-semi-space-size=16').split(/\s+/).filter(Boolean);
const entries = process.argv.slice(2);
if (entries.length === 0) throw new Error('usage: node bench/idle-rss.ts <entry> [<entry> ...]');

const kib = (status: string, field: string) =>
  Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);
const mib = (k: number) => (k / 1024).toFixed(0);

async function readOnce(
  entry: string,
): Promise<{ readyMs: number; rss: number; anon: number; file: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-idle-'));
  const database = EMBEDDED ? undefined : await createTestDatabaseUrl();
  const started = performance.now();
  const child = spawn(process.execPath, [...NODE_ARGS, entry], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ROLE,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536',
      DATABASE_URL: database?.url ?? '',
      REDIS_URL: '',
      SESSION_SECRET: 'idle-rss-session-secret',
      CRYPTO_SECRET: 'idle-rss-crypto-secret',
    },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const readyMs = await new Promise<number>((resolve, reject) => {
      let seen = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('turnpike is ready')) resolve(performance.now() - started);
      });
      void exited.then((code) => reject(new Error(`${entry} exited (${code}) before it was ready`)));
    });
    await sleep(SECONDS * 1000);
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return { readyMs, rss: kib(status, 'VmRSS'), anon: kib(status, 'RssAnon'), file: kib(status, 'RssFile') };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `ROLE=${ROLE} on ${EMBEDDED ? 'embedded PGlite' : 'Postgres'}, node ${NODE_ARGS.join(' ')}, RSS ${SECONDS} s after ready`,
);
// The entries take turns, so a reading of each falls in the same minutes of whatever else the host does.
for (let i = 0; i < READINGS; i += 1) {
  for (const entry of entries) {
    const r = await readOnce(entry);
    console.log(
      `${entry}\tready after ${Math.round(r.readyMs)} ms\tRSS ${mib(r.rss)} MiB (anon ${mib(r.anon)}, file ${mib(r.file)})`,
    );
  }
}

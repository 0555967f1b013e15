/**
 * The server as the image runs it: built into JavaScript by scripts/build-server.ts (docs/adr/0038), started as
 * `node server/dist/main.js` would be, all in one on an embedded database. Starting at all proves what the bundle
 * finds by path: the PGlite worker (a built entry of its own) and the migrations folder; the answers prove the
 * console API and the lazily loaded relay are there.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@turnpike/core/testing/free-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'turnpike-built-'));
// Inside the repository, as in the image: the bundle imports npm packages from the node_modules above it.
mkdirSync(path.join(ROOT, 'server/dist'), { recursive: true });
const outdir = mkdtempSync(path.join(ROOT, 'server/dist/test-'));
let server: ChildProcess | undefined;
let base = '';
let output = '';

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build-server.ts', '--outdir', outdir], { cwd: ROOT });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['--max-semi-space-size=16', path.join(outdir, 'main.js')], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      ROLE: 'all',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: path.join(work, 'data'),
      LOG_LEVEL: 'info',
    },
  });
  const child = server;
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('turnpike is ready')) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`the built server exited (${code}):\n${output}`)));
  });
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
  rmSync(outdir, { recursive: true, force: true });
});

describe('the built server', () => {
  it('is JavaScript only, with the worker and the tracing preload as files of their own', () => {
    const files = readdirSync(outdir).filter((file) => !file.endsWith('.map'));
    expect(files).toEqual(
      expect.arrayContaining([
        'main.js',
        'pglite-worker.js',
        'pglite-initdb-process.js',
        'tracing-register.js',
      ]),
    );
    expect(files.every((file) => file.endsWith('.js'))).toBe(true);
    // the role modules stay lazy: chunks beside the entries, not one file holding every role
    expect(files.length).toBeGreaterThan(5);
  });

  it('starts all in one on the embedded database and answers the console API', async () => {
    const response = await fetch(`${base}/api/status`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { success: boolean; data: Record<string, unknown> };
    expect(body.success).toBe(true);
    expect(body.data).toBeTypeOf('object');
    expect(output).toContain('"database":"pglite"');
  });

  it('answers the relay in OpenAI\u2019s shape: a wrong key is a 401 invalid_api_key', async () => {
    const response = await fetch(`${base}/v1/models`, {
      headers: { authorization: 'Bearer sk-wrongwrongwrongwrongwrong' },
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ code: 'invalid_api_key', type: 'invalid_request_error' });
    expect(body.error.message).toEqual(expect.any(String));
  });

  it('serves the console from console/dist exactly when it has been built', async () => {
    const response = await fetch(`${base}/`);
    if (existsSync(path.join(ROOT, 'console/dist/index.html'))) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
    } else {
      expect(response.status).toBe(503);
      expect(await response.text()).toContain('The console has not been built yet');
    }
  });
});

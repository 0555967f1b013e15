import { Writable } from 'node:stream';
import { buildApp } from '@turnpike/api';
import { startBootServer } from '@turnpike/api/http/boot-server';
import { registerRelay } from '@turnpike/relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './testing/test-app.ts';

const SECRET = 'sk-log-secret-4f9a2c7e1b';

/** Every line a logger writes, as text. */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}

describe('logs never carry a credential', () => {
  let base: TestApp;
  beforeAll(async () => {
    base = await createTestApp();
  });
  afterAll(async () => base.close());

  it('the all-in-one app logs each request with the query key and the headers hidden', async () => {
    const { lines, stream } = capture();
    const app = await buildApp(base.runtime.deps, { logger: { level: 'info', stream } });
    await registerRelay(app, base.runtime.deps);
    await app.ready();
    try {
      const gemini = await app.inject({
        method: 'GET',
        url: `/v1beta/models?key=${SECRET}&pageSize=5`,
        headers: { 'x-goog-api-key': SECRET, cookie: `session=${SECRET}` },
      });
      expect(gemini.statusCode).toBe(401);
      const openai = await app.inject({
        method: 'GET',
        url: `/v1/models?api-key=${SECRET}`,
        headers: { authorization: `Bearer ${SECRET}`, 'api-key': SECRET, 'x-api-key': SECRET },
      });
      expect(openai.statusCode).toBe(401);
    } finally {
      await app.close();
    }
    const logged = lines.join('');
    // The requests were logged (so the check below reads real lines), with their paths and harmless parameters.
    expect(logged).toContain('/v1beta/models?key=[redacted]&pageSize=5');
    expect(logged).toContain('/v1/models?api-key=[redacted]');
    expect(logged).not.toContain(SECRET);
  });

  it('the boot server, which answers while the database is away, hides the query key too', async () => {
    const { lines, stream } = capture();
    const boot = await startBootServer({ port: 0, host: '127.0.0.1', logger: { level: 'info', stream } });
    try {
      boot.log.info({ req: { method: 'GET', url: `/v1beta/models?key=${SECRET}` } }, 'a request');
      boot.log.info({ key: SECRET, password: SECRET, authorization: SECRET }, 'an object with secrets');
    } finally {
      await boot.close();
    }
    const logged = lines.join('');
    expect(logged).toContain('a request');
    expect(logged).toContain('an object with secrets');
    expect(logged).not.toContain(SECRET);
  });
});

import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../testing/test-app.ts';
import { createReadiness, installDrainGate, type Readiness, registerHealthRoutes } from './health.ts';

describe('health, readiness and draining', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let readiness: Readiness;
  let url: string;
  beforeAll(async () => {
    t = await createTestApp();
    app = Fastify();
    readiness = createReadiness({ db: t.runtime.deps.db, redis: t.runtime.deps.redis });
    registerHealthRoutes(app, readiness);
    app.post('/v1/chat/completions', async () => ({ ok: true }));
    app.get('/api/status', async () => ({ success: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    installDrainGate(app.server, readiness);
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('is alive and ready while its dependencies answer', async () => {
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('once draining, fails readiness and refuses new requests in their caller protocol', async () => {
    readiness.drain();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not ready', failures: ['draining'] });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const openai = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(openai.status).toBe(503);
    expect(openai.headers.get('connection')).toBe('close');
    expect(((await openai.json()) as { error: { code: string } }).error.code).toBe('server_draining');
    const anthropic = await fetch(`${url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const gemini = await fetch(`${url}/v1beta/models/gemini-pro:generateContent`, {
      method: 'POST',
      body: '{}',
    });
    expect(await gemini.json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
    const console = await fetch(`${url}/api/status`);
    expect(console.status).toBe(503);
    expect(await console.json()).toMatchObject({ success: false, data: null });
  });
});

describe('readiness of a process that serves from memory', () => {
  it('needs the database to become ready, then reports an outage as degraded instead of failing', async () => {
    let up = false;
    const db = {
      execute: async () => {
        if (!up) throw new Error('connection refused');
        return [];
      },
    } as unknown as Parameters<typeof createReadiness>[0]['db'];
    const now = Date.now;
    let clock = 0;
    Date.now = () => now() + clock;
    try {
      const readiness = createReadiness({ db, degradeAfterReady: true });
      expect((await readiness.check()).failures).toHaveLength(1);
      up = true;
      clock += 1_000;
      expect(await readiness.check()).toEqual({ failures: [], degraded: [] });
      up = false;
      clock += 1_000;
      const after = await readiness.check();
      expect(after.failures).toEqual([]);
      expect(after.degraded[0]).toContain('database');
    } finally {
      Date.now = now;
    }
  });
});

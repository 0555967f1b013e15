import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callUpstreamJson, channelBaseUrl, fetchUpstreamBalance, getUpstreamJson } from './upstream.ts';

describe('upstream calls', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      if (req.url === '/html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>maintenance</html>');
        return;
      }
      if (req.url === '/token') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_grant' }));
        return;
      }
      if (req.url === '/v1/user/info') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 20000, status: true, data: { totalBalance: 'n/a' } }));
        return;
      }
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'boom sk-secret' } }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('gives up after the timeout with a clear 502', async () => {
    const started = Date.now();
    await expect(getUpstreamJson(`${base}/slow`, {}, 200)).rejects.toMatchObject({
      status: 502,
      message: 'the upstream did not answer in time',
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('names the status but not the body of a failed answer', async () => {
    const error = await getUpstreamJson(`${base}/fail`, {}).catch((e: Error) => e);
    expect(error).toMatchObject({ status: 502, message: 'the upstream answered HTTP 500' });
    expect((error as Error).message).not.toContain('sk-secret');
  });

  it("returns a 4xx answer's JSON only when the caller reads refusals, naming who answered", async () => {
    const call = { method: 'POST' as const, headers: {}, body: new URLSearchParams({ code: 'x' }) };
    await expect(callUpstreamJson(`${base}/token`, call, { name: 'GitHub' })).rejects.toMatchObject({
      status: 502,
      message: 'GitHub answered HTTP 400',
    });
    expect(await callUpstreamJson(`${base}/token`, call, { refusalIsAnswer: true })).toEqual({
      error: 'invalid_grant',
    });
    await expect(callUpstreamJson(`${base}/fail`, call, { refusalIsAnswer: true })).rejects.toMatchObject({
      message: 'the upstream answered HTTP 500',
    });
  });

  it('refuses an answer that is not JSON', async () => {
    await expect(getUpstreamJson(`${base}/html`, {})).rejects.toMatchObject({
      status: 502,
      message: /not JSON/,
    });
  });

  it('refuses a balance that is not a number', async () => {
    await expect(fetchUpstreamBalance(40, base, 'sk-x')).rejects.toMatchObject({ message: /not a number/ });
  });

  it('reports an unreachable upstream', async () => {
    await expect(getUpstreamJson('http://127.0.0.1:1/x', {}, 2000)).rejects.toMatchObject({
      status: 502,
      message: 'the upstream is unreachable',
    });
  });

  it("uses the type's default base URL when the channel has none", () => {
    expect(channelBaseUrl(43, '')).toBe('https://api.deepseek.com');
    expect(channelBaseUrl(1, 'https://proxy.test/')).toBe('https://proxy.test');
  });
});

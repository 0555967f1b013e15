import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpProxy, startSocks5Proxy } from '../testing/fake-proxies.ts';
import {
  callUpstreamJson,
  channelBaseUrl,
  channelProxy,
  fetchUpstreamBalance,
  fetchUpstreamModels,
  getUpstreamJson,
} from './upstream.ts';

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
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }] }));
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
    await expect(getUpstreamJson(`${base}/slow`, {}, { timeoutMs: 200 })).rejects.toMatchObject({
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
    await expect(getUpstreamJson('http://127.0.0.1:1/x', {}, { timeoutMs: 2000 })).rejects.toMatchObject({
      status: 502,
      message: 'the upstream is unreachable',
    });
  });

  it("uses the type's default base URL when the channel has none", () => {
    expect(channelBaseUrl(43, '')).toBe('https://api.deepseek.com');
    expect(channelBaseUrl(1, 'https://proxy.test/')).toBe('https://proxy.test');
  });

  describe("through the channel's outbound proxy", () => {
    it('lists models and reads a balance through an HTTP proxy with credentials', async () => {
      const proxy = await startHttpProxy({ username: 'ops', password: 'p@ss' });
      try {
        const withCredentials = proxy.url.replace('http://', 'http://ops:p%40ss@');
        const models = await fetchUpstreamModels(1, base, 'sk-x', { proxy: withCredentials });
        expect(models).toEqual(['gpt-4o', 'gpt-4o-mini']);
        await expect(
          fetchUpstreamBalance(40, base, 'sk-x', { proxy: withCredentials }),
        ).rejects.toMatchObject({ message: /not a number/ });
        expect(proxy.targets).toHaveLength(2);
        expect(new Set(proxy.targets)).toEqual(new Set([base.replace('http://', '')]));
        expect(proxy.refusedCount).toBe(0);
      } finally {
        await proxy.close();
      }
    });

    it('lists models through a SOCKS5 proxy', async () => {
      const proxy = await startSocks5Proxy();
      try {
        expect(await fetchUpstreamModels(1, base, 'sk-x', { proxy: proxy.url })).toEqual([
          'gpt-4o',
          'gpt-4o-mini',
        ]);
        expect(proxy.targets).toEqual([base.replace('http://', '')]);
      } finally {
        await proxy.close();
      }
    });

    it('fails with a clear 502 that does not repeat the proxy address when the proxy is unusable', async () => {
      const error = await fetchUpstreamModels(1, base, 'sk-x', {
        proxy: 'ftp://ops:secret@proxy.example',
      }).catch((e: Error) => e);
      expect(error).toMatchObject({
        code: 'UPSTREAM_FAILED',
        message: /not a valid http, https or socks5 URL/,
      });
      expect(String((error as Error).message)).not.toContain('secret');
      const refused = await startHttpProxy({ username: 'ops', password: 'right' });
      try {
        const wrong = refused.url.replace('http://', 'http://ops:wrong@');
        const answer = await fetchUpstreamModels(1, base, 'sk-x', { proxy: wrong }).catch((e: Error) => e);
        expect(answer).toMatchObject({ code: 'UPSTREAM_FAILED' });
        expect(String((answer as Error).message)).not.toContain('wrong');
        expect(refused.refusedCount).toBe(1);
      } finally {
        await refused.close();
      }
    });

    it("reads a channel's proxy from its stored setting", () => {
      expect(channelProxy(JSON.stringify({ proxy: ' socks5://127.0.0.1:1080 ' }))).toBe(
        'socks5://127.0.0.1:1080',
      );
      expect(channelProxy(JSON.stringify({ proxy: '' }))).toBeUndefined();
      expect(channelProxy('{not json')).toBeUndefined();
      expect(channelProxy(null)).toBeUndefined();
    });
  });
});

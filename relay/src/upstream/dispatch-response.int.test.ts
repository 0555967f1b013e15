import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamFailure } from './client.ts';

/** What the test server saw: answers cut off before their end, bytes written, the socket of the last request. */
const seen = { cutOff: 0, written: 0, socket: undefined as Socket | undefined };
const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
const server = createServer((req, res) => {
  res.on('close', () => {
    if (!res.writableFinished) seen.cutOff += 1;
  });
  seen.socket = req.socket;
  routes.get(req.url ?? '')?.(req, res);
});
let origin = '';
const client = createUpstreamClient({ headersTimeoutMs: 2000, bodyTimeoutMs: 2000 });

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await client.close();
  server.close();
});

const get = (path: string, extra: { signal?: AbortSignal; bodyTimeoutMs?: number } = {}) =>
  client.request({ url: `${origin}${path}`, method: 'GET', ...extra });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends `total` bytes in 64 KiB writes, waiting for 'drain' whenever the socket is full. */
function sendLarge(res: ServerResponse, total: number) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
  const block = Buffer.alloc(64 * 1024, 'x');
  const more = () => {
    while (seen.written < total) {
      seen.written += block.length;
      if (!res.write(block)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

/** An event stream that never ends by itself: one event every 10 ms. */
function sendForever(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const timer = setInterval(() => res.write('data: {}\n\n'), 10);
  res.on('close', () => clearInterval(timer));
}

describe('an upstream exchange on the dispatch protocol', () => {
  it('pauses the socket while a slow consumer holds a piece, so a large body is not buffered whole', async () => {
    const total = 256 * 1024 * 1024;
    seen.written = 0;
    routes.set('/large', (_req, res) => sendLarge(res, total));
    const response = await get('/large');
    const reading = response.body[Symbol.asyncIterator]();
    let received = (await reading.next()).value?.length ?? 0;
    // The consumer is busy: the server can write only what the socket buffers and one high-water mark hold.
    await sleep(500);
    const writtenWhileBusy = seen.written;
    expect(writtenWhileBusy).toBeLessThan(total / 4);
    for (let piece = await reading.next(); !piece.done; piece = await reading.next())
      received += piece.value.length;
    expect(received).toBe(total);
    expect(response.body.ended).toBe(true);
  });

  it('fails a body that stays silent past the idle timeout, while streamed or read whole', async () => {
    routes.set('/stall', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n');
    });
    const streamed = await get('/stall', { bodyTimeoutMs: 150 });
    const pieces: string[] = [];
    const failure = await (async () => {
      for await (const piece of streamed.body) pieces.push(Buffer.from(piece).toString());
    })().catch((error: UpstreamFailure) => error);
    expect(pieces).toEqual(['data: {}\n\n']);
    expect(failure).toMatchObject({ kind: 'timeout', message: 'upstream stream timeout' });

    const whole = await get('/stall', { bodyTimeoutMs: 150 });
    await expect(whole.readText()).rejects.toMatchObject({
      kind: 'timeout',
      message: 'upstream stream timeout',
    });
    await expect.poll(() => seen.cutOff).toBeGreaterThanOrEqual(2);
  });

  it('restarts the idle clock at every piece of a body read whole', async () => {
    routes.set('/dribble', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent < 8) res.write('[]');
        else res.end('[]', () => clearInterval(timer));
      }, 50);
    });
    expect(await (await get('/dribble', { bodyTimeoutMs: 150 })).readText()).toBe('[]'.repeat(8));
    await (await get('/dribble', { bodyTimeoutMs: 150 })).discard();
  });

  it('fails a body whose connection closes before its end as a socket failure', async () => {
    routes.set('/cut', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': '1000' });
      res.write('data: {}\n\n');
      setTimeout(() => res.socket?.destroy(), 30);
    });
    const streamed = await get('/cut');
    const pieces: string[] = [];
    const failure = await (async () => {
      for await (const piece of streamed.body) pieces.push(Buffer.from(piece).toString());
    })().catch((error: UpstreamFailure) => error);
    expect(pieces).toEqual(['data: {}\n\n']);
    expect(failure).toMatchObject({ kind: 'socket', message: 'upstream connection error' });
    await expect((await get('/cut')).readText()).rejects.toMatchObject({ kind: 'socket' });
  });

  it("stops the upstream when the caller's signal aborts, before the head or mid-body, and lets go of the signal", async () => {
    routes.set('/slow-head', (_req, res) => {
      setTimeout(() => sendForever(res), 300);
    });
    routes.set('/forever', (_req, res) => sendForever(res));
    const cutBefore = seen.cutOff;

    const early = new AbortController();
    const waiting = get('/slow-head', { signal: early.signal });
    setTimeout(() => early.abort(), 50);
    await expect(waiting).rejects.toMatchObject({ kind: 'aborted' });

    const late = new AbortController();
    const response = await get('/forever', { signal: late.signal });
    let pieces = 0;
    const failure = await (async () => {
      for await (const _ of response.body) if (++pieces === 3) late.abort();
    })().catch((error: UpstreamFailure) => error);
    expect(failure).toMatchObject({ kind: 'aborted' });
    await expect.poll(() => seen.cutOff).toBe(cutBefore + 2);

    // An exchange that ends leaves no listener on the caller's signal.
    const kept = new AbortController();
    routes.set('/done', (_req, res) => res.end('{}'));
    expect(await (await get('/done', { signal: kept.signal })).readText()).toBe('{}');
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });

  it('stops the upstream when the consumer stops reading early', async () => {
    routes.set('/forever', (_req, res) => sendForever(res));
    const cutBefore = seen.cutOff;
    const response = await get('/forever');
    for await (const _ of response.body) break;
    expect(response.body.ended).toBe(true);
    await expect.poll(() => seen.cutOff).toBe(cutBefore + 1);
  });

  it('reads text up to its limit: a longer body is cut and its connection closed, one within it kept', async () => {
    const text = 'é'.repeat(50_000);
    routes.set('/text', (_req, res) => res.end(text));
    expect(await (await get('/text')).readText(Buffer.byteLength(text))).toBe(text);
    const kept = seen.socket as Socket;
    await sleep(50);
    expect(kept.closed).toBe(false);

    expect(await (await get('/text')).readText(1000)).toBe('é'.repeat(500));
    const cut = seen.socket as Socket;
    await expect.poll(() => cut.closed).toBe(true);
  });

  it('discards a short body keeping its connection, and closes the connection of a long one', async () => {
    routes.set('/short', (_req, res) => res.end('{"error":"x"}'));
    routes.set('/long', (_req, res) => sendLarge(res, 1024 * 1024));
    await (await get('/short')).discard();
    const kept = seen.socket as Socket;
    await sleep(50);
    expect(kept.closed).toBe(false);

    seen.written = 0;
    await (await get('/long')).discard();
    const cut = seen.socket as Socket;
    await expect.poll(() => cut.closed).toBe(true);
    expect(await (await get('/short')).readText()).toBe('{"error":"x"}');
  });
});

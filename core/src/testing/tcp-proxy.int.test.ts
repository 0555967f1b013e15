import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy, tcpTargetOf } from './tcp-proxy.ts';

/** Connects, sends `text`, resolves with the echo, or rejects with the socket's error code. */
const echoThrough = (port: number, text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code ?? error.message)));
    socket.once('data', (data) => {
      resolve(data.toString());
      socket.end();
    });
    socket.write(text);
  });

const openSocket = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });

const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('the TCP proxy a test puts in front of a service', () => {
  let echo: Server;
  let proxy: TcpProxy;

  beforeAll(async () => {
    echo = createServer((socket) => socket.on('error', () => {}).pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await startTcpProxy({ port: (echo.address() as { port: number }).port });
  });
  afterAll(async () => {
    await proxy.close();
    echo.close();
  });

  it('forwards, refuses new connections, resets open ones and comes back on the same port', async () => {
    expect(await echoThrough(proxy.port, 'one')).toBe('one');

    const open = await openSocket(proxy.port);
    await until(() => proxy.connectionCount === 1);
    await proxy.refuse();
    expect(proxy.isRefusing).toBe(true);
    await expect(echoThrough(proxy.port, 'two')).rejects.toThrow('ECONNREFUSED');
    // an open connection still carries bytes until it is reset
    const echoed = new Promise((resolve) => open.once('data', (data) => resolve(data.toString())));
    open.write('still here');
    expect(await echoed).toBe('still here');

    const closedWith = new Promise<string>((resolve) => {
      open.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      open.once('close', () => resolve('closed'));
    });
    proxy.resetAll();
    expect(await closedWith).toBe('ECONNRESET');
    expect(proxy.connectionCount).toBe(0);

    await proxy.restore();
    expect(proxy.isRefusing).toBe(false);
    expect(await echoThrough(proxy.port, 'three')).toBe('three');
  });

  it('rewrites a URL to go through it', () => {
    expect(proxy.urlThrough('postgres://u:p@db.internal:5432/app?sslmode=disable')).toBe(
      `postgres://u:p@127.0.0.1:${proxy.port}/app?sslmode=disable`,
    );
    expect(tcpTargetOf('redis://cache')).toEqual({ host: 'cache', port: 6379 });
  });
});

describe.skipIf(!process.env.TEST_POSTGRES_URL)('the TCP proxy in front of Postgres', () => {
  it('a reset connection fails the query in flight, and a restored proxy serves a new client', async () => {
    const url = process.env.TEST_POSTGRES_URL as string;
    const proxy = await startTcpProxy(url);
    try {
      const client = new pg.Client({ connectionString: proxy.urlThrough(url) });
      client.on('error', () => {});
      await client.connect();
      expect((await client.query('select 1 as one')).rows[0].one).toBe(1);
      await proxy.refuse();
      const sleeping = client.query('select pg_sleep(5)');
      await until(() => proxy.connectionCount === 1);
      proxy.resetAll();
      await expect(sleeping).rejects.toThrow();
      await expect(
        new pg.Client({ connectionString: proxy.urlThrough(url), connectionTimeoutMillis: 2_000 }).connect(),
      ).rejects.toThrow(/ECONNREFUSED/);
      await proxy.restore();
      const again = new pg.Client({ connectionString: proxy.urlThrough(url) });
      await again.connect();
      expect((await again.query('select 2 as two')).rows[0].two).toBe(2);
      await again.end();
    } finally {
      await proxy.close();
    }
  });
});

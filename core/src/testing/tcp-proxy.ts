/**
 * A TCP proxy for tests, on 127.0.0.1 and a free port, forwarding every connection to one target: a test puts it
 * in front of Postgres (or Redis) to make the service "go away" without touching the server other tests share.
 *
 * - `refuse()` closes the listener: new connections are refused (ECONNREFUSED), those already open carry on;
 * - `resetAll()` destroys every open connection with a TCP reset, on both sides (what a failover or a dead
 *   primary looks like to a client: ECONNRESET or "Connection terminated unexpectedly");
 * - `restore()` listens again on the same port.
 *
 * Usually `refuse()` then `resetAll()` for an outage, and `restore()` for its end.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.ts';

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Connections carried now. */
  readonly connectionCount: number;
  /** Connections accepted since the start. */
  readonly acceptedCount: number;
  /** Whether new connections are refused (between `refuse()` and `restore()`). */
  readonly isRefusing: boolean;
  /** `url` with its host and port replaced by the proxy's (`postgres://u:p@db:5432/x` → `…@127.0.0.1:<port>/x`). */
  urlThrough(url: string): string;
  /** Stops listening: new connections are refused. Open ones are left as they are. */
  refuse(): Promise<void>;
  /** Resets every open connection (both its sides). The listener is left as it is. */
  resetAll(): void;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Refuses and resets everything, for good. */
  close(): Promise<void>;
}

export interface TcpProxyTarget {
  readonly host?: string;
  readonly port: number;
}

/** Parses a target from a URL (`postgres://…@host:5432/db`, `redis://host:6379`). */
export function tcpTargetOf(url: string): Required<TcpProxyTarget> {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol.startsWith('redis') ? 6379 : 5432;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : defaultPort,
  };
}

const reset = (socket: Socket) => {
  if (socket.destroyed) return;
  // resetAndDestroy sends an RST when the socket is connected; before that, a plain destroy.
  if (socket.readyState === 'open') socket.resetAndDestroy();
  else socket.destroy();
};

export async function startTcpProxy(target: TcpProxyTarget | string): Promise<TcpProxy> {
  const { host: targetHost, port: targetPort } =
    typeof target === 'string' ? tcpTargetOf(target) : { host: '127.0.0.1', ...target };
  const host = '127.0.0.1';
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let acceptedCount = 0;
  let server: Server | undefined;
  let closed = false;

  const carry = (client: Socket) => {
    acceptedCount += 1;
    const upstream = connect({ host: targetHost, port: targetPort });
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      reset(client);
      reset(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const next = createServer({ noDelay: true }, carry);
      next.once('error', reject);
      next.listen(port, host, () => {
        next.off('error', reject);
        server = next;
        resolve();
      });
    });

  let port = 0;
  // A free port found up front may be taken by the time we listen: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await listen(port);
      break;
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
  const refuse = async () => {
    const current = server;
    server = undefined;
    // close() stops accepting at once; its callback waits for the open connections, which we leave be.
    current?.close();
  };
  const resetAll = () => {
    for (const { client, upstream } of [...pairs]) {
      reset(client);
      reset(upstream);
    }
    pairs.clear();
  };

  return {
    host,
    port,
    get connectionCount() {
      return pairs.size;
    },
    get acceptedCount() {
      return acceptedCount;
    },
    get isRefusing() {
      return server === undefined;
    },
    urlThrough(url: string) {
      const parsed = new URL(url);
      parsed.hostname = host;
      parsed.port = String(port);
      return parsed.toString();
    },
    refuse,
    resetAll,
    async restore() {
      if (closed) throw new Error('the proxy is closed');
      if (server) return;
      // The port was ours a moment ago; the OS may hold it briefly, so try again for a little while.
      const deadline = Date.now() + 5_000;
      for (;;) {
        try {
          await listen(port);
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    },
    async close() {
      closed = true;
      await refuse();
      resetAll();
    },
  };
}

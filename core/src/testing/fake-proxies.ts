/**
 * Outbound proxies for tests, on 127.0.0.1 and an ephemeral port, recording every request they carry:
 *
 * - an HTTP proxy (RFC 9110 §9.3.6 CONNECT tunnels, and absolute-form requests forwarded as they are), with
 *   optional Basic `Proxy-Authorization` (a wrong or missing one gets 407);
 * - a SOCKS5 proxy (RFC 1928, CONNECT only) with optional username/password authentication (RFC 1929).
 *
 * Neither sends traffic anywhere but to the loopback targets tests ask for.
 */
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

export interface ProxyCredentials {
  readonly username: string;
  readonly password: string;
}

export interface FakeProxy {
  /** `http://127.0.0.1:<port>` or `socks5://127.0.0.1:<port>` (no credentials). */
  readonly url: string;
  /** `host:port` of every target carried, in order (CONNECT targets and forwarded requests alike). */
  readonly targets: string[];
  /** Requests refused for missing or wrong credentials. */
  readonly refusedCount: number;
  close(): Promise<void>;
}

const closeServer = (server: Server, sockets: Set<Socket>) =>
  new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy();
    server.close(() => resolve());
  });

const track = (server: Server, sockets: Set<Socket>) =>
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

/** An HTTP forward proxy that also tunnels CONNECT. */
export async function startHttpProxy(credentials?: ProxyCredentials): Promise<FakeProxy> {
  const targets: string[] = [];
  let refusedCount = 0;
  const expected = credentials
    ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
    : undefined;
  const authorised = (header: string | undefined) => expected === undefined || header === expected;

  const server = createHttpServer((req, res) => {
    if (!authorised(req.headers['proxy-authorization'])) {
      refusedCount += 1;
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url ?? '');
    targets.push(target.host);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    if (!authorised(req.headers['proxy-authorization'])) {
      refusedCount += 1;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    targets.push(req.url ?? '');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const sockets = new Set<Socket>();
  track(server, sockets);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    get refusedCount() {
      return refusedCount;
    },
    close: () => closeServer(server, sockets),
  };
}

/** A SOCKS5 proxy: no authentication, or username/password when `credentials` are given. */
export async function startSocks5Proxy(credentials?: ProxyCredentials): Promise<FakeProxy> {
  const targets: string[] = [];
  let refusedCount = 0;
  const server = createServer((client) => {
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'connected' = 'greeting';
    const onData = (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        if (stage === 'greeting') {
          if (buffer.length < 2 || buffer.length < 2 + (buffer[1] as number)) return;
          const methods = buffer.subarray(2, 2 + (buffer[1] as number));
          buffer = buffer.subarray(2 + (buffer[1] as number));
          const wanted = credentials ? 0x02 : 0x00;
          if (!methods.includes(wanted)) {
            refusedCount += 1;
            client.end(Buffer.from([5, 0xff]));
            return;
          }
          client.write(Buffer.from([5, wanted]));
          stage = credentials ? 'auth' : 'request';
        } else if (stage === 'auth') {
          if (buffer.length < 2) return;
          const userLength = buffer[1] as number;
          if (buffer.length < 3 + userLength) return;
          const passwordLength = buffer[2 + userLength] as number;
          if (buffer.length < 3 + userLength + passwordLength) return;
          const username = buffer.toString('utf8', 2, 2 + userLength);
          const password = buffer.toString('utf8', 3 + userLength, 3 + userLength + passwordLength);
          buffer = buffer.subarray(3 + userLength + passwordLength);
          if (username !== credentials?.username || password !== credentials.password) {
            refusedCount += 1;
            client.end(Buffer.from([1, 1]));
            return;
          }
          client.write(Buffer.from([1, 0]));
          stage = 'request';
        } else if (stage === 'request') {
          if (buffer.length < 5) return;
          const type = buffer[3];
          const addressLength = type === 1 ? 4 : type === 4 ? 16 : 1 + (buffer[4] as number);
          if (buffer.length < 4 + addressLength + 2) return;
          const host =
            type === 1
              ? [...buffer.subarray(4, 8)].join('.')
              : type === 3
                ? buffer.toString('latin1', 5, 5 + (buffer[4] as number))
                : '::1';
          const port = buffer.readUInt16BE(4 + addressLength);
          const command = buffer[1];
          const rest = buffer.subarray(4 + addressLength + 2);
          buffer = Buffer.alloc(0);
          stage = 'connected';
          client.off('data', onData);
          targets.push(`${host}:${port}`);
          if (command !== 1) {
            client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
            return;
          }
          const upstream = connect(port, host, () => {
            client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
            if (rest.length > 0) upstream.write(rest);
            upstream.pipe(client);
            client.pipe(upstream);
          });
          upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
          client.on('error', () => upstream.destroy());
          return;
        } else return;
      }
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
  });
  const sockets = new Set<Socket>();
  track(server, sockets);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `socks5://127.0.0.1:${port}`,
    targets,
    get refusedCount() {
      return refusedCount;
    },
    close: () => closeServer(server, sockets),
  };
}

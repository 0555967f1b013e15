/**
 * The guarded client against real sockets on 127.0.0.x: each listener counts the TCP connections it accepts, so
 * "never reached" is what a server on the gateway's own network would see, not what the client says.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { readOptionText } from '../options/registry.ts';
import { freePort } from '../testing/free-port.ts';
import {
  createCheckedDispatcher,
  createGuardedFetch,
  type GuardedFetchError,
  type GuardedFetchOptions,
  type OutboundPolicy,
  outboundPolicyOf,
  type ResolveHost,
} from './guarded-fetch.ts';

interface Listener {
  readonly port: number;
  readonly connections: () => number;
  readonly requests: { url: string; host: string; body: string }[];
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An HTTP server on `host` that counts connections and requests; `answer` writes each response. */
async function listen(
  host: string,
  answer: (res: http.ServerResponse) => void = (res) => res.writeHead(204).end(),
  port = 0,
): Promise<Listener> {
  let connections = 0;
  const requests: Listener['requests'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      requests.push({ url: req.url ?? '', host: req.headers.host ?? '', body });
      answer(res);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, connections: () => connections, requests };
}

/** The policy root's settings give, read through the registry as a save would store them. */
function policy(allowedText = '', isProtected = true): OutboundPolicy {
  const read = readOptionText('fetch_setting.allowed_ranges', allowedText);
  if (!read.ok) throw new Error(read.message);
  const values = {
    'fetch_setting.allowed_ranges': read.parsed,
    'fetch_setting.enable_ssrf_protection': isProtected,
  } as Record<string, unknown>;
  return outboundPolicyOf(((key: string) => values[key]) as Parameters<typeof outboundPolicyOf>[0]);
}

/** A resolver that answers each lookup with the next answer (the last one repeats), counting calls. */
function resolverAnswering(...answers: string[][]) {
  const calls: string[] = [];
  const resolve: ResolveHost = async (hostname) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

function guarded(options: Partial<GuardedFetchOptions> = {}) {
  return createGuardedFetch({ subject: 'the webhook', policy: () => policy(), ...options });
}

async function failureOf(promise: Promise<unknown>): Promise<GuardedFetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error('the call succeeded');
  return error as GuardedFetchError;
}

describe('the guarded client', () => {
  it('never connects to a listener on 127.0.0.1, however the address is written', async () => {
    const inside = await listen('127.0.0.1');
    const fetch = guarded();
    const spellings = [
      `http://127.0.0.1:${inside.port}/internal-admin/delete-everything`,
      `http://localhost:${inside.port}/`,
      `http://LOCALHOST.:${inside.port}/`,
      `http://[::ffff:127.0.0.1]:${inside.port}/`,
      `http://2130706433:${inside.port}/`,
      `http://0x7f.1:${inside.port}/`,
      `http://0177.0.0.1:${inside.port}/`,
      `http://127.1:${inside.port}/`,
      `https://127.0.0.1:${inside.port}/`,
    ];
    for (const url of spellings) {
      const error = await failureOf(fetch({ url, method: 'POST', body: '{}' }));
      expect(error.message, url).toBe('the webhook address is not allowed');
      expect(error.failure).toBe('not_allowed');
    }
    expect(inside.connections()).toBe(0);
  });

  it('refuses a name that resolves to a private address without connecting anywhere, in the words of a name that does not resolve', async () => {
    const inside = await listen('127.0.0.1');
    const toPrivate = resolverAnswering(['10.0.0.1']);
    const error = await failureOf(
      guarded({ resolve: toPrivate.resolve })({ url: 'http://hooks.example.test/x', method: 'POST' }),
    );
    // "not allowed" would tell the user the name exists inside the gateway's network.
    expect(error.message).toBe('the webhook could not be reached');
    // Of the same kind as a failed lookup too, so the notifier retries it alike and its timing tells nothing.
    expect(error.failure).toBe('unreachable');
    expect(String((error.cause as Error).message)).toContain('10.0.0.1');
    // One address of several in a blocked range is enough: the others are not tried either.
    const mixed = resolverAnswering(['127.0.0.1', '169.254.169.254']);
    const second = await failureOf(
      guarded({ resolve: mixed.resolve, policy: () => policy('127.0.0.0/8') })({
        url: `http://hooks.example.test:${inside.port}/`,
      }),
    );
    expect(second.message).toBe('the webhook could not be reached');
    expect(inside.connections()).toBe(0);
  });

  it('does not follow a redirect from an allowed server to the loopback address', async () => {
    const target = await listen('127.0.0.1');
    const outside = await listen('127.0.0.2', (res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end(),
    );
    const answer = await guarded({ policy: () => policy('127.0.0.2') })({
      url: `http://127.0.0.2:${outside.port}/hook`,
      method: 'POST',
      body: '{}',
    });
    expect(answer.status).toBe(302);
    expect(outside.requests).toHaveLength(1);
    expect(target.connections()).toBe(0);
  });

  it('reaches the loopback listener once root allows 127.0.0.0/8, and nothing else becomes allowed', async () => {
    const inside = await listen('127.0.0.1');
    const fetch = guarded({ policy: () => policy('127.0.0.0/8') });
    const answer = await fetch({
      url: `http://127.0.0.1:${inside.port}/hook?a=1`,
      method: 'POST',
      body: '{"x":1}',
    });
    expect(answer.status).toBe(204);
    expect(inside.requests).toEqual([
      { url: '/hook?a=1', host: `127.0.0.1:${inside.port}`, body: '{"x":1}' },
    ]);
    const toMetadata = resolverAnswering(['169.254.169.254']);
    const error = await failureOf(
      guarded({ policy: () => policy('127.0.0.0/8'), resolve: toMetadata.resolve })({
        url: 'http://metadata.example.test/latest/meta-data/',
      }),
    );
    expect(error.failure).toBe('unreachable');
    expect(error.message).toBe('the webhook could not be reached');
    expect(String((error.cause as Error).message)).toContain('169.254.169.254');
  });

  it('reaches anything with the protection switched off by root', async () => {
    const inside = await listen('127.0.0.1');
    const answer = await guarded({ policy: () => policy('', false) })({
      url: `http://127.0.0.1:${inside.port}/`,
    });
    expect(answer.status).toBe(204);
    expect(inside.connections()).toBe(1);
  });

  it('connects to the address it checked, even when a second lookup would answer otherwise', async () => {
    const checked = await listen('127.0.0.2');
    const rebound = await listen('127.0.0.3', undefined, checked.port);
    const rebinding = resolverAnswering(['127.0.0.2'], ['127.0.0.3']);
    const answer = await guarded({ policy: () => policy('127.0.0.2'), resolve: rebinding.resolve })({
      url: `http://hooks.example.test:${checked.port}/hook`,
      method: 'POST',
      body: '{}',
    });
    expect(answer.status).toBe(204);
    expect(rebinding.calls).toEqual(['hooks.example.test']);
    expect(checked.requests).toEqual([
      { url: '/hook', host: `hooks.example.test:${checked.port}`, body: '{}' },
    ]);
    expect(rebound.connections()).toBe(0);
  });

  it('sends the name, not the address, as the TLS server name', async () => {
    const names: string[] = [];
    const server = tls.createServer({
      // Without a certificate the handshake fails after the client hello has named the server.
      SNICallback: (name, done) => {
        names.push(name);
        done(new Error('no certificate here'));
      },
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const error = await failureOf(
      guarded({ policy: () => policy('127.0.0.2'), resolve: resolverAnswering(['127.0.0.2']).resolve })({
        url: `https://hooks.example.test:${port}/`,
      }),
    );
    expect(error.message).toBe('the webhook could not be reached');
    expect(names).toEqual(['hooks.example.test']);
  });

  it('says the same for a closed port, a silent one and a name that does not resolve', async () => {
    const closed = await freePort();
    const silent = await listen('127.0.0.1', () => {});
    const fetch = guarded({ policy: () => policy('127.0.0.0/8'), timeoutMs: 300 });
    const failing: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.test'), { code: 'ENOTFOUND' });
    };
    const errors = [
      await failureOf(fetch({ url: `http://127.0.0.1:${closed}/` })),
      await failureOf(fetch({ url: `http://127.0.0.1:${silent.port}/` })),
      await failureOf(
        guarded({ policy: () => policy('127.0.0.0/8'), resolve: failing })({
          url: 'http://nowhere.example.test/',
        }),
      ),
    ];
    expect(errors.map((e) => e.message)).toEqual([
      'the webhook could not be reached',
      'the webhook could not be reached',
      'the webhook could not be reached',
    ]);
    expect(errors.map((e) => e.failure)).toEqual(['unreachable', 'unreachable', 'unreachable']);
    // The detail is kept for the server log.
    expect(String(errors[2]?.cause)).toContain('ENOTFOUND');
    expect(silent.connections()).toBe(1);
  });

  it('reads at most the cap of a large answer', async () => {
    const big = Buffer.alloc(1024 * 1024, 'a');
    const inside = await listen('127.0.0.1', (res) => res.writeHead(200).end(big));
    const answer = await guarded({ policy: () => policy('127.0.0.0/8'), maxResponseBytes: 1000 })({
      url: `http://127.0.0.1:${inside.port}/`,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBe(1000);
  });

  it('refuses schemes other than http and https', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'not a url']) {
      const error = await failureOf(guarded()({ url }));
      expect(error.message, url).toBe('the webhook address is not allowed');
    }
  });
});

describe('the checked dispatcher (a whole answer from an address an administrator has not saved yet)', () => {
  it('connects to the address it checked and keeps the name in the Host header', async () => {
    const checked = await listen('127.0.0.2', (res) => res.writeHead(200).end('{"data":[]}'));
    const rebound = await listen('127.0.0.3', undefined, checked.port);
    const rebinding = resolverAnswering(['127.0.0.2'], ['127.0.0.3']);
    const dispatcher = createCheckedDispatcher({
      policy: () => policy('127.0.0.2'),
      subject: 'the upstream',
      resolve: rebinding.resolve,
    });
    closers.push(() => dispatcher.destroy());
    const answer = await undiciFetch(`http://models.example.test:${checked.port}/v1/models`, { dispatcher });
    expect(await answer.text()).toBe('{"data":[]}');
    expect(checked.requests).toEqual([
      { url: '/v1/models', host: `models.example.test:${checked.port}`, body: '' },
    ]);
    expect(rebound.connections()).toBe(0);
  });

  it('refuses a name with an address root has not allowed without connecting', async () => {
    const inside = await listen('127.0.0.2');
    const dispatcher = createCheckedDispatcher({
      policy: () => policy(),
      subject: 'the upstream',
      resolve: resolverAnswering(['8.8.8.8', '127.0.0.2']).resolve,
    });
    closers.push(() => dispatcher.destroy());
    const error = await failureOf(undiciFetch(`http://models.example.test:${inside.port}/`, { dispatcher }));
    expect((error.cause as GuardedFetchError).failure).toBe('not_allowed');
    expect(String((error.cause as GuardedFetchError).cause)).toContain('127.0.0.2');
    expect(inside.connections()).toBe(0);
  });
});

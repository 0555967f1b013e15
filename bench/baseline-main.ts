/**
 * The baseline of `make bench`: the least a proxy in front of the upstream can do on the same stack as the relay
 * (Fastify, an undici keep-alive Pool). No auth, no billing, no logging, no JSON parsing: the request body is
 * forwarded as bytes and the answer, stream or not, is piped back. The relay's cost is read against this.
 *
 * `node bench/baseline-main.ts <upstream url>`; reports `{ type: 'ready', port }` over IPC, answers `cpu` with the
 * CPU time it used so far and `rss` with its RSS now, stops on `stop`.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstreamUrl = process.argv[2];
if (!upstreamUrl) throw new Error('usage: baseline-main.ts <upstream url>');

// As many connections as the relay's upstream client allows per origin, so 2,000 streams are served at once here too.
const pool = new Pool(upstreamUrl, { connections: 4096, keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024 });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
  done(null, body),
);

const SKIPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

app.post('/v1/chat/completions', async (request, reply) => {
  const upstream = await pool.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' },
    body: request.body as Buffer,
  });
  reply.code(upstream.statusCode);
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value !== undefined && !SKIPPED.has(name)) reply.header(name, value);
  }
  return reply.send(upstream.body);
});

await app.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('no port');

const stop = async () => {
  await app.close();
  await pool.close();
  process.exit(0);
};
process.on('message', (message: { type: string }) => {
  if (message.type === 'stop') stop().catch(() => process.exit(1));
  if (message.type === 'rss') {
    // Only the RSS now is read of the baseline (the capacity run's samples).
    const rss = process.memoryUsage.rss();
    process.send?.({ type: 'rss', rss, peak: rss, heapAfterGc: 0 });
  }
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', micros: user + system });
  }
});
process.on('disconnect', () => {
  stop().catch(() => process.exit(1));
});
process.send?.({ type: 'ready', port: address.port });

import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** A loopback OTLP/HTTP receiver: the JSON bodies posted to /v1/traces. */
const received: unknown[] = [];
const receiver = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url === '/v1/traces') received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

/** Runs `code` in a fresh node with the register module imported first, as the chart starts the server. */
function runTraced(code: string, env: Record<string, string>): Promise<number | null> {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const child = spawn(
    process.execPath,
    ['--import', join(import.meta.dirname, 'tracing-register.ts'), '--input-type=module', '-e', code],
    { env: { ...inherited, ...env }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return new Promise((resolve) => child.on('exit', resolve));
}

describe('tracing-register (node --import)', () => {
  it('exports relay spans to the OTLP endpoint the standard variables name', async () => {
    const { port } = receiver.address() as AddressInfo;
    const metrics = pathToFileURL(join(import.meta.dirname, 'relay-metrics.ts')).href;
    const code = `
      const { createRelayMetrics } = await import(${JSON.stringify(metrics)});
      createRelayMetrics({ processMetrics: false }).recordCall({
        route: '/v1/chat/completions', model: 'gpt-4o-mini', channelId: 1, status: 200, isStream: false,
        totalMs: 80, upstreamMs: 70, frtMs: 70, promptTokens: 3, completionTokens: 5, quota: 1, requestId: 'req-otlp',
      });`;
    const exit = await runTraced(code, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'turnpike-relay-test',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    });
    expect(exit).toBe(0);
    const text = JSON.stringify(received);
    expect(text).toContain('"chat gpt-4o-mini"');
    expect(text).toContain('"upstream"');
    expect(text).toContain('req-otlp');
    expect(text).toContain('turnpike-relay-test');
  });
});

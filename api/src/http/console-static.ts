import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { edgeErrorBody } from '@turnpike/core/http/edge-errors';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';

export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist', import.meta.url));

/** Paths that belong to the API or the relay: an unknown one answers a JSON 404, never the console page. */
const API_PATH = /^\/(api|v1|v1beta|pg|mj|suno|dashboard|metrics)(\/|$)/;

/**
 * Serves the built console: hashed assets cached for a year, `index.html` never cached, and every other GET
 * path answered with `index.html` so the client router can handle deep links.
 */
export async function registerConsole(
  app: FastifyInstance,
  options: { root?: string; webLimit: onRequestAsyncHookHandler },
): Promise<void> {
  const root = options.root ?? CONSOLE_DIST;
  const built = existsSync(`${root}/index.html`);
  if (built) {
    await app.register(fastifyStatic, {
      root,
      wildcard: false,
      index: false,
      setHeaders(reply, filePath) {
        reply.header(
          'cache-control',
          filePath.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    });
  }

  app.setNotFoundHandler({ preHandler: options.webLimit }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (request.method !== 'GET' || API_PATH.test(path)) {
      // In the shape of the protocol the path belongs to (the one map, core's edge-errors.ts).
      const message = `no route ${request.method} ${path}`;
      return reply.status(404).send(edgeErrorBody(path, 404, 'NOT_FOUND', message, request.method));
    }
    if (!built) {
      return reply
        .status(503)
        .type('text/plain')
        .send('The console has not been built yet: run `make build` (or `make run`).');
    }
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html', root);
  });
}

/**
 * What a process answers on its port before its app is built: while it waits for the database (a process
 * started during an outage waits instead of exiting, which Kubernetes would turn into a crash loop), it is live
 * but not ready. `GET /healthz` answers 200, `GET /readyz` 503 with what it waits for, and every other request a
 * 503 with Retry-After in its caller's protocol (the envelope on /api). The server logs the wait once per
 * change, not once per try. Closed just before the app listens on the same port.
 */
import type { WaitState } from '@turnpike/core/db/wait-for-database';
import { loggerOptions } from '@turnpike/core/http/log-redaction';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE_BODY } from './error-handler.ts';
import { drainingBody } from './health.ts';

export interface BootServer {
  /** The process's logger until the app has its own. */
  readonly log: FastifyBaseLogger;
  /** Told how the wait for the database goes (waitForDatabase's `onStateChange`). */
  report(state: WaitState): void;
  /** Stops answering and listening (the app takes the port over). */
  close(): Promise<void>;
}

export async function startBootServer(options: {
  readonly port: number;
  readonly host: string;
  readonly logger: Record<string, unknown>;
}): Promise<BootServer> {
  // Probes every few seconds are not worth a log line each.
  const app = Fastify({
    logger: loggerOptions(options.logger),
    forceCloseConnections: true,
    logController: new LogController({ disableRequestLogging: true }),
  });
  let failures = ['starting'];
  let waitingForDatabase = false;
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => reply.code(503).send({ status: 'not ready', failures }));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '/';
    reply.code(503).header('connection', 'close').type('application/json; charset=utf-8');
    if (waitingForDatabase && path.startsWith('/api')) return reply.send(DATABASE_UNAVAILABLE_BODY);
    return reply.send(
      drainingBody(
        path,
        waitingForDatabase
          ? 'this server is waiting for its database; retry the request shortly'
          : 'this server is starting; retry the request shortly',
        'server_starting',
      ),
    );
  });
  await app.listen({ port: options.port, host: options.host });
  return {
    log: app.log,
    report(state) {
      if (state.state === 'waiting') {
        waitingForDatabase = true;
        failures = [`database: ${state.reason}`];
        app.log.warn(
          { reason: state.reason, attempt: state.attempt },
          'the database is unreachable: waiting for it (live, not ready)',
        );
      } else {
        waitingForDatabase = false;
        failures = ['starting'];
        app.log.info(
          { attempts: state.attempts, waitedMs: state.waitedMs },
          'the database answers: starting',
        );
      }
    },
    async close() {
      await app.close();
    },
  };
}

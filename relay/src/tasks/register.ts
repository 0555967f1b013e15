/**
 * `registerTaskRoutes(app, ctx)`: the task providers' routes (Midjourney `/mj/*`, Suno `/suno/*`, video `/v1/videos` and the reference's video routes) in their own
 * scope, and the poller, started when the app is ready and stopped (lease given up) when it closes.
 */
import { isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import type { FastifyError, FastifyInstance } from 'fastify';
import { batchProvider } from '../batches/provider.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from '../errors.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { createDatabaseLease, createRedisLease } from './lease.ts';
import { taskMetricsOf } from './metrics.ts';
import { midjourneyProvider } from './midjourney/midjourney.ts';
import { createTaskPoller, type TaskPoller } from './poller.ts';
import type { TaskProvider } from './provider.ts';
import { sunoProvider } from './suno/suno.ts';
import { registerReferenceVideoRoutes } from './video/reference.ts';
import { videoProvider } from './video/video.ts';

export const TASK_PROVIDERS: readonly TaskProvider[] = [
  midjourneyProvider,
  sunoProvider,
  videoProvider,
  batchProvider,
];

const pollers = new WeakMap<FastifyInstance, TaskPoller>();

/** The poller of a relay app (tests run passes by hand). */
export function taskPollerOf(app: FastifyInstance): TaskPoller {
  const poller = pollers.get(app);
  if (!poller) throw new Error('the task routes are not registered on this app');
  return poller;
}

export async function registerTaskRoutes(app: FastifyInstance, ctx: RelayContext): Promise<void> {
  // The task metrics are on the relay's registry from the start, so a scrape shows them before any task.
  taskMetricsOf(ctx);
  await app.register(async (scope) => {
    // Fastify's own refusals (unreadable JSON, a body too large) and bugs, in the shape of the API each route
    // stands in for: Suno-API's envelope on /suno, Midjourney-Proxy's answer elsewhere.
    // A database that cannot be reached (storing a task, reading a drawing) is a 503 to try again shortly.
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const unreachable = isDatabaseUnreachable(error);
      const status = unreachable ? 503 : error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error }, 'task request failed');
      if (unreachable) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      const message = unreachable
        ? 'the database is unreachable; try again shortly'
        : status === 500
          ? 'internal error'
          : error.message;
      const sunoCode = unreachable
        ? 'database_unavailable'
        : status === 500
          ? 'internal_error'
          : 'invalid_request';
      if (request.url.startsWith('/suno/'))
        return reply.code(status).send({ code: sunoCode, message, data: null });
      return reply.code(status).send({ code: status, description: message, type: 'turnpike_error' });
    });
    for (const provider of TASK_PROVIDERS) provider.register(scope, ctx);
    // The reference's own video routes, on the video provider's tasks (polled with them).
    registerReferenceVideoRoutes(scope, ctx);
  });
  const { redis, config } = ctx.deps;
  const poller = createTaskPoller({
    ctx,
    providers: TASK_PROVIDERS,
    lease: redis ? createRedisLease(redis, config.redisKeyPrefix) : createDatabaseLease(ctx.deps.db),
  });
  pollers.set(app, poller);
  app.addHook('onReady', async () => poller.start());
  app.addHook('onClose', async () => poller.stop());
}

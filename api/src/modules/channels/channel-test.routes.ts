/**
 * Channel tests (administrators only):
 *
 * - `GET /api/channel/test/:id?model=` tests one channel and answers `{ success, message, time }` (time in
 *   seconds, beside the envelope's fields as the console reads it). A failed test is `success: false` with the
 *   reason, HTTP 200; an unknown channel is 404.
 * - `GET /api/channel/test` starts a test of every channel in the background and answers at once
 *   `{ success: true, message }`; while a run is going, another start is refused with 409 `CONFLICT`.
 * - `GET /api/channel/test/progress` answers the current or last run:
 *   `{ success, message, data: { running, done, total, failed, started_at, finished_at } }` (unix seconds).
 *
 * With `CHANNEL_TEST_FREQUENCY` set, the same run starts every that many minutes in this process (the console
 * API's, never a relay-only one), pausing `POLLING_INTERVAL` seconds between channels; it stops with the app.
 */

import { startTestLoop } from '@turnpike/core/channels/test-loop';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseId } from '../../http/validate.ts';
import { type ChannelTestServiceOptions, createChannelTestService } from './channel-test.service.ts';

/** The `model` query parameter: a model name, or undefined when absent or blank. */
function modelOf(query: unknown): string | undefined {
  const model = (query as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' && model.trim() !== '' ? model.trim().slice(0, 255) : undefined;
}

export function registerChannelTestRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  options: ChannelTestServiceOptions = {},
): void {
  const onError = (err: unknown) => app.log.error({ err }, 'channel test run failed');
  const service = createChannelTestService(ctx.deps, { onError, ...options });
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  type IdParams = { Params: { id: string } };

  app.get('/channel/test', admin, async () => {
    await service.startTestAll();
    return ok(undefined, 'testing every channel in the background');
  });
  app.get('/channel/test/progress', admin, async () => ok(await service.progress()));
  app.get<IdParams>('/channel/test/:id', admin, async (request) => {
    const outcome = await service.test(parseId(request.params.id), modelOf(request.query));
    return { ...outcome, data: { time: outcome.time } };
  });

  const minutes = ctx.deps.config.channelTestFrequencyMinutes;
  const everyMs = minutes === undefined ? undefined : minutes * 60_000;
  const loop =
    everyMs === undefined
      ? undefined
      : startTestLoop({ everyMs, run: () => service.runPeriodicRound(everyMs).then(() => {}), onError });
  app.addHook('onClose', async () => {
    await Promise.all([loop?.stop(), service.close()]);
  });
}

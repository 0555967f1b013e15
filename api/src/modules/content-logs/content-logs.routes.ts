/**
 * Content logs (docs/adr/0045):
 * - `GET /api/log/content/:request_id`: the prompt and answer of a call, for its log's detail; an administrator
 *   reads any call's, a user their own (another's is not found).
 * - `GET|PUT /api/token/:id/content_log`: a user's switch of one of their own tokens, `{ enabled }`.
 * - `GET|PUT /api/content_log/token/:id`: an administrator's, for any token (audited, as every administrative
 *   change is). A group's calls keep content logs when an administrator lists it in `ContentLogGroups`.
 */
import { contentLogSwitchSchema } from '@turnpike/core/contracts/content-logs';
import { Role } from '@turnpike/core/domain/closed-sets';
import { AppError } from '@turnpike/core/errors';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createContentLogService } from './content-logs.service.ts';

type IdParams = { Params: { id: string } };

export function registerContentLogRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const contents = createContentLogService(ctx.deps);
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  app.get<{ Params: { request_id: string } }>('/log/content/:request_id', signedIn, async (request) => {
    const requestId = request.params.request_id;
    if (requestId.length === 0 || requestId.length > 64)
      throw new AppError('VALIDATION_FAILED', 'request_id is not valid');
    return ok(await contents.read(currentUser(request), requestId));
  });

  app.get<IdParams>('/token/:id/content_log', signedIn, async (request) =>
    ok(await contents.switchOf(parseId(request.params.id), currentUser(request).id)),
  );
  app.put<IdParams>('/token/:id/content_log', signedIn, async (request) => {
    const { enabled } = parseInput(contentLogSwitchSchema, request.body);
    const user = currentUser(request);
    return ok(await contents.setSwitch(parseId(request.params.id), user.id, enabled, user), 'saved');
  });

  app.get<IdParams>('/content_log/token/:id', admin, async (request) =>
    ok(await contents.switchOf(parseId(request.params.id), undefined)),
  );
  app.put<IdParams>('/content_log/token/:id', admin, async (request) => {
    const { enabled } = parseInput(contentLogSwitchSchema, request.body);
    return ok(
      await contents.setSwitch(parseId(request.params.id), undefined, enabled, currentUser(request)),
      'saved',
    );
  });
}

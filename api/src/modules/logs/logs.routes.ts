import {
  adminLogQuerySchema,
  deleteLogsQuerySchema,
  logSearchQuerySchema,
  selfLogQuerySchema,
  tokenLogQuerySchema,
} from '@turnpike/core/contracts/logs';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';
import { createLogsService } from './logs.service.ts';

/** Usage logs. The app ignores trailing slashes, so `/log/` and `/log` are one route. */
export function registerLogRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const logs = createLogsService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/log/', admin, async (request) =>
    ok(await logs.listAll(parseInput(adminLogQuerySchema, request.query))),
  );
  app.delete('/log/', admin, async (request) => {
    const { target_timestamp } = parseInput(deleteLogsQuerySchema, request.query);
    const count = await logs.deleteBefore(target_timestamp);
    return ok(count, `deleted ${count} logs`);
  });
  app.get('/log/self', signedIn, async (request) =>
    ok(await logs.listOwn(currentUser(request), parseInput(selfLogQuerySchema, request.query))),
  );
  app.get('/log/stat', admin, async (request) =>
    ok(await logs.statAll(parseInput(adminLogQuerySchema, request.query))),
  );
  app.get('/log/self/stat', signedIn, async (request) =>
    ok(await logs.statOwn(currentUser(request), parseInput(selfLogQuerySchema, request.query))),
  );
  app.get('/log/search', admin, async (request) =>
    ok(await logs.searchAll(parseInput(logSearchQuerySchema, request.query))),
  );
  // Usage of one key, for key-query pages in any origin: the key (`?key=sk-…` or a bearer header) is the credential.
  app.options('/log/token', async (_request, reply) =>
    reply
      .code(204)
      .headers({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'authorization',
      })
      .send(),
  );
  app.get('/log/token', async (request, reply) => {
    reply.header('access-control-allow-origin', '*');
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const { key } = parseInput(tokenLogQuerySchema, request.query);
    const given = key ?? bearer;
    if (!given) throw new AppError('BAD_REQUEST', 'key is required: ?key=sk-… or Authorization: Bearer sk-…');
    return ok(await logs.listOfKey(given));
  });
  app.get('/log/self/search', signedIn, async (request) =>
    ok(await logs.searchOwn(currentUser(request), parseInput(logSearchQuerySchema, request.query))),
  );
}

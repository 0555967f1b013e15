import type { Page } from '@turnpike/core/contracts/envelope';
import {
  createTokenSchema,
  type TokenView,
  tokenPageQuerySchema,
  tokenSearchQuerySchema,
  tokenStatusSchema,
  updateTokenSchema,
} from '@turnpike/core/contracts/tokens';
import { Role } from '@turnpike/core/domain/users';
import type { TokenPage } from '@turnpike/core/repos/token.repo';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createTokenService } from './tokens.service.ts';

/** `/api/token/*`: every call acts on the signed-in user's own tokens only. */
export function registerTokenRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const tokens = createTokenService(ctx.deps);
  const toPage = async (result: TokenPage, page: number, size: number): Promise<Page<TokenView>> => ({
    items: await Promise.all(result.rows.map(tokens.view)),
    total: result.total,
    page,
    page_size: size,
  });
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/token/', signedIn, async (request) => {
    const { p, size } = parseInput(tokenPageQuerySchema, request.query);
    return ok(await toPage(await tokens.list(currentUser(request), p, size), p, size));
  });

  app.get('/token/search', signedIn, async (request) => {
    const query = parseInput(tokenSearchQuerySchema, request.query);
    return ok(
      await toPage(
        await tokens.search(currentUser(request), query, query.p, query.size),
        query.p,
        query.size,
      ),
    );
  });

  app.get<{ Params: { id: string } }>('/token/:id', signedIn, async (request) =>
    ok(await tokens.view(await tokens.get(currentUser(request), parseId(request.params.id)))),
  );

  app.post('/token/', signedIn, async (request) => {
    const token = await tokens.create(currentUser(request), parseInput(createTokenSchema, request.body));
    return ok(await tokens.view(token), 'token created');
  });

  app.put<{ Querystring: { status_only?: string } }>('/token/', signedIn, async (request) => {
    const statusOnly = request.query.status_only === 'true';
    const input = statusOnly
      ? parseInput(tokenStatusSchema, request.body)
      : parseInput(updateTokenSchema, request.body);
    const token = await tokens.update(currentUser(request), input, statusOnly);
    return ok(await tokens.view(token), 'token updated');
  });

  app.delete<{ Params: { id: string } }>('/token/:id', signedIn, async (request) => {
    await tokens.delete(currentUser(request), parseId(request.params.id));
    return ok(undefined, 'token deleted');
  });
}

import { type Page, pageQuerySchema } from '@turnpike/core/contracts/envelope';
import {
  createRedemptionSchema,
  type RedemptionView,
  redemptionSearchQuerySchema,
  redemptionStatusSchema,
  toRedemptionView,
  updateRedemptionSchema,
} from '@turnpike/core/contracts/redemptions';
import { Role } from '@turnpike/core/domain/users';
import type { RedemptionPage } from '@turnpike/core/repos/redemption.repo';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createRedemptionService } from './redemptions.service.ts';

const toPage = (result: RedemptionPage, page: number, size: number): Page<RedemptionView> => ({
  items: result.rows.map(toRedemptionView),
  total: result.total,
  page,
  page_size: size,
});

/** `/api/redemption/*`: admins only. Redeeming a code is `/api/user/topup` (wallet). */
export function registerRedemptionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const redemptions = createRedemptionService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  app.get('/redemption/', admin, async (request) => {
    const { p, page_size } = parseInput(pageQuerySchema, request.query);
    return ok(toPage(await redemptions.list(p, page_size), p, page_size));
  });

  app.get('/redemption/search', admin, async (request) => {
    const { keyword, p, page_size } = parseInput(redemptionSearchQuerySchema, request.query);
    return ok(toPage(await redemptions.search(keyword, p, page_size), p, page_size));
  });

  app.get<{ Params: { id: string } }>('/redemption/:id', admin, async (request) =>
    ok(toRedemptionView(await redemptions.get(parseId(request.params.id)))),
  );

  app.post('/redemption/', admin, async (request) => {
    const keys = await redemptions.create(
      currentUser(request),
      parseInput(createRedemptionSchema, request.body),
    );
    return ok(keys, `created ${keys.length} redemption code${keys.length === 1 ? '' : 's'}`);
  });

  app.put<{ Querystring: { status_only?: string } }>('/redemption/', admin, async (request) => {
    const statusOnly = request.query.status_only === 'true';
    const input = statusOnly
      ? parseInput(redemptionStatusSchema, request.body)
      : parseInput(updateRedemptionSchema, request.body);
    return ok(toRedemptionView(await redemptions.update(input, statusOnly)), 'redemption code updated');
  });

  app.delete<{ Params: { id: string } }>('/redemption/:id', admin, async (request) => {
    await redemptions.delete(parseId(request.params.id));
    return ok(undefined, 'redemption code deleted');
  });
}

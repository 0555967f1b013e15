import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../../http/route-context.ts';
import { createPricingService } from './pricing.service.ts';

export function registerPricingRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const pricing = createPricingService(ctx.deps);

  /** Public: a visitor sees the selectable groups, a signed-in user also their own group. */
  app.get('/pricing', async (request) => pricing.pricing(await ctx.auth.tryUser(request)));
}

import { setupSchema } from '@turnpike/core/contracts/users';
import type { FastifyInstance } from 'fastify';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';
import { createSetupService } from './setup.service.ts';

export function registerSetupRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const setup = createSetupService(ctx.deps);

  app.get('/setup', async () => ok(await setup.status()));

  app.post('/setup', async (request) => {
    await setup.complete(parseInput(setupSchema, request.body));
    return ok(undefined, 'the system is set up');
  });
}

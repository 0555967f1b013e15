import {
  affTransferSchema,
  toUserView,
  updateSelfSchema,
  userSettingSchema,
} from '@turnpike/core/contracts/users';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { clearSession, renewSession } from '../../http/session.ts';
import { parseInput } from '../../http/validate.ts';
import { createQuotaWindowService } from '../quota-windows/quota-windows.service.ts';
import { createSelfService } from './self.service.ts';

export function registerSelfRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const self = createSelfService(ctx.deps);
  const windows = createQuotaWindowService(ctx.deps);
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.get('/user/self', signedIn, async (request) => {
    const user = currentUser(request);
    // Their own windows and their group's, each with what it has spent: the wallet shows them.
    return ok({ ...toUserView(user, { includeAccessToken: true }), ...(await windows.ofUser(user)) });
  });

  app.put('/user/self', signedIn, async (request, reply) => {
    const user = currentUser(request);
    const saved = await self.update(user, parseInput(updateSelfSchema, request.body));
    // A new password ends the user's other sessions; this one stays signed in.
    if (saved.sessionGeneration !== user.sessionGeneration) renewSession(request, reply, ctx.sessions, saved);
    return ok(undefined, 'saved');
  });

  app.delete('/user/self', signedIn, async (request, reply) => {
    await self.deregister(currentUser(request));
    clearSession(reply);
    return ok(undefined, 'your account has been deleted');
  });

  app.get('/user/token', signedIn, async (request) =>
    ok(await self.regenerateAccessToken(currentUser(request))),
  );

  app.get('/user/aff', signedIn, async (request) => ok(await self.affCode(currentUser(request))));

  app.post('/user/aff_transfer', signedIn, async (request) => {
    const { quota } = parseInput(affTransferSchema, request.body);
    await self.transferAffQuota(currentUser(request), quota);
    return ok(undefined, 'moved to your balance');
  });

  app.put('/user/setting', signedIn, async (request) => {
    await self.updateSetting(currentUser(request), parseInput(userSettingSchema, request.body));
    return ok(undefined, 'notification settings saved');
  });

  app.get('/user/self/groups', signedIn, async (request) => ok(self.groupsFor(currentUser(request).group)));

  /** Public: the pricing page shows visitors the selectable groups. */
  app.get('/user/groups', async (request) => {
    const user = await ctx.auth.tryUser(request);
    return ok(self.groupsFor(user?.group));
  });

  app.get('/user/models', signedIn, async (request) => ok(await self.models(currentUser(request))));
}

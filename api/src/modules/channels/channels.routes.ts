import {
  batchTagSchema,
  channelIdsSchema,
  channelPageQuerySchema,
  channelSearchQuerySchema,
  createChannelSchema,
  editTagSchema,
  fetchModelsSchema,
  manageKeysSchema,
  tagSchema,
  updateChannelSchema,
} from '@turnpike/core/contracts/channels';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createChannelKeyService } from './channel-keys.service.ts';
import { registerChannelTestRoutes } from './channel-test.routes.ts';
import { createChannelService } from './channels.service.ts';

/** `POST /api/channel/copy/:id`: what to append to the name, and whether the copy starts with a zero balance. */
const copyChannelSchema = z.object({
  suffix: z.string({ error: 'suffix must be text' }).max(64, 'suffix is too long').default('_copy'),
  reset_balance: z.boolean({ error: 'reset_balance must be true or false' }).default(true),
});

export function registerChannelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const channels = createChannelService(ctx.deps);
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  type IdParams = { Params: { id: string } };
  registerChannelTestRoutes(app, ctx);

  app.get('/channel/', admin, async (request) =>
    ok(await channels.list(parseInput(channelPageQuerySchema, request.query))),
  );
  app.get('/channel/search', admin, async (request) =>
    ok(await channels.search(parseInput(channelSearchQuerySchema, request.query))),
  );
  app.get('/channel/models', admin, async () => ok(channels.catalogueModels()));
  app.get('/channel/models_enabled', admin, async () => ok(await channels.enabledModels()));

  app.get('/channel/update_balance', admin, async () => ok(await channels.updateAllBalances()));
  app.get<IdParams>('/channel/update_balance/:id', admin, async (request) => {
    const balance = await channels.updateBalance(parseId(request.params.id));
    return { ...ok({ balance }), balance };
  });

  app.get<IdParams>('/channel/fetch_models/:id', admin, async (request) =>
    ok(await channels.fetchModelsOf(parseId(request.params.id))),
  );
  app.post('/channel/fetch_models', admin, async (request) => {
    const input = parseInput(fetchModelsSchema, request.body);
    return ok(
      await channels.fetchModels(
        { type: input.type, baseUrl: input.base_url, key: input.key, other: input.other },
        currentUser(request),
      ),
    );
  });

  app.get<IdParams>('/channel/:id', admin, async (request) =>
    ok(await channels.get(parseId(request.params.id))),
  );

  app.post('/channel/', admin, async (request) => {
    const created = await channels.create(
      parseInput(createChannelSchema, request.body),
      currentUser(request),
    );
    return ok(created, created.length > 1 ? `${created.length} channels created` : 'channel created');
  });
  app.put('/channel/', admin, async (request) =>
    ok(await channels.update(parseInput(updateChannelSchema, request.body), currentUser(request)), 'saved'),
  );

  app.post<IdParams>('/channel/copy/:id', admin, async (request) => {
    const options = parseInput(copyChannelSchema, request.body);
    const copy = await channels.copy(parseId(request.params.id), {
      suffix: options.suffix,
      resetBalance: options.reset_balance,
    });
    return ok(copy, 'channel copied');
  });

  app.delete('/channel/disabled', admin, async () => ok(await channels.deleteDisabled()));
  app.delete<IdParams>('/channel/:id', admin, async (request) => {
    await channels.delete(parseId(request.params.id));
    return ok(undefined, 'channel deleted');
  });
  app.post('/channel/batch', admin, async (request) =>
    ok(await channels.deleteMany(parseInput(channelIdsSchema, request.body).ids)),
  );
  app.post('/channel/batch/tag', admin, async (request) => {
    const { ids, tag } = parseInput(batchTagSchema, request.body);
    return ok(await channels.tagMany(ids, tag));
  });
  const keys = createChannelKeyService(ctx.deps);
  app.post('/channel/multi_key/manage', admin, async (request) => {
    const result = await keys.manage(parseInput(manageKeysSchema, request.body));
    return ok(result.data, result.message);
  });
  app.post('/channel/fix', admin, async () => ok(await channels.fixAbilities()));

  app.post('/channel/tag/enabled', admin, async (request) =>
    ok(await channels.setTagStatus(parseInput(tagSchema, request.body).tag, ChannelStatus.Enabled)),
  );
  app.post('/channel/tag/disabled', admin, async (request) =>
    ok(await channels.setTagStatus(parseInput(tagSchema, request.body).tag, ChannelStatus.ManuallyDisabled)),
  );
  app.put('/channel/tag', admin, async (request) =>
    ok(await channels.editTag(parseInput(editTagSchema, request.body))),
  );
}

import { Role } from '@turnpike/core/domain/users';
import { listOptionOwners } from '@turnpike/core/options/managed-options';
import { refuseManagedOption } from '@turnpike/core/ownership/option-guard';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { parseInput } from '../../http/validate.ts';

/** Values arrive as text, but scripts often send JSON booleans and numbers; store them as their text. */
const updateOptionSchema = z.object({
  key: z.string({ error: 'key is required' }).trim().min(1, 'key is required'),
  value: z
    .union([z.string(), z.number(), z.boolean()], { error: 'value must be text, a number or a boolean' })
    .transform(String),
});

export function registerOptionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { options } = ctx.deps;
  const root = { preHandler: ctx.auth.requireRole(Role.Root) };
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  app.get('/option/', root, async () => ok(options.list()));

  /** Which option values Kubernetes resources own (whole options, or price map entries); the console shows them read-only. */
  app.get('/option/owners', root, async () => ok(await listOptionOwners(ctx.deps.db)));

  app.put('/option/', root, async (request) => {
    const { key, value } = parseInput(updateOptionSchema, request.body);
    // Values a Kubernetes resource owns are Git's (docs/adr/0017); the refusal names the resource.
    if (options.has(key)) await refuseManagedOption(ctx.deps.db, key, options.getText(key), value);
    await options.set(key, value);
    return ok(undefined, 'saved');
  });

  app.post('/option/rest_model_ratio', root, async () => {
    // Dropping the stored value serves the built-in table, so later releases' new defaults reach this deployment.
    await refuseManagedOption(ctx.deps.db, 'ModelRatio', options.getText('ModelRatio'), undefined);
    await options.reset('ModelRatio');
    return ok(undefined, 'model ratios restored to the built-in defaults');
  });

  app.get('/group/', admin, async () => ok(Object.keys(options.get('GroupRatio'))));
}

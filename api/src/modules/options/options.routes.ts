import { isRoot, Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { listOptionOwners } from '@turnpike/core/options/managed-options';
import { isOptionKey, isSecretOptionKey, mayManageOption } from '@turnpike/core/options/registry';
import { refuseManagedOption } from '@turnpike/core/ownership/option-guard';
import { managedByKubernetes } from '@turnpike/core/ownership/source';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../http/auth.ts';
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

/**
 * Administrators manage the operation settings, root everything (`optionAudience` in the registry says which is
 * which). An unknown key is left to the registry's own message, so a typo is told as a typo.
 */
function refuseUnlessAllowed(key: string, role: number): void {
  if (!isOptionKey(key) || mayManageOption(key, role)) return;
  const what = isSecretOptionKey(key) ? 'a secret' : 'a system setting';
  throw new AppError('FORBIDDEN', `${key} is ${what}; only the root user may change it`);
}

export function registerOptionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { options } = ctx.deps;
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };

  /** Root reads every option but secrets; an administrator only the operation settings they may change. */
  app.get('/option/', admin, async (request) => {
    const { role } = currentUser(request);
    const all = options.list();
    return ok(isRoot(role) ? all : all.filter((o) => mayManageOption(o.key, role)));
  });

  /** Which option values Kubernetes resources own (whole options, or price map entries); the console shows them read-only. */
  app.get('/option/owners', admin, async (request) => {
    const { role } = currentUser(request);
    const owners = await listOptionOwners(ctx.deps.db);
    return ok(isRoot(role) ? owners : owners.filter((o) => mayManageOption(o.key, role)));
  });

  app.put('/option/', admin, async (request) => {
    const { key, value } = parseInput(updateOptionSchema, request.body);
    refuseUnlessAllowed(key, currentUser(request).role);
    // Values a Kubernetes resource owns are Git's (docs/adr/0017); the refusal names the resource.
    if (options.has(key)) await refuseManagedOption(ctx.deps.db, key, options.getText(key), value);
    await options.set(key, value);
    return ok(undefined, 'saved');
  });

  /**
   * Resets the console's ModelRatio to the built-in table. Dropping the stored value serves the built-in table, so
   * later releases' new defaults reach this deployment. Entries a ModelPrice owns are rows of their own that the
   * store lays over whatever map is stored (docs/adr/0017), so they are kept and do not block the reset; only a
   * resource owning the whole option (none may today: a GatewayOption cannot set a price map) would.
   */
  app.post('/option/rest_model_ratio', admin, async (request) => {
    refuseUnlessAllowed('ModelRatio', currentUser(request).role);
    const owners = await listOptionOwners(ctx.deps.db, ['ModelRatio']);
    const whole = owners.find((o) => o.entry === '');
    if (whole) throw managedByKubernetes('option ModelRatio', whole);
    await options.reset('ModelRatio');
    const kept = owners.length > 0 ? `; ${owners.length} managed by Kubernetes kept` : '';
    return ok(undefined, `model ratios restored to the built-in defaults${kept}`);
  });

  app.get('/group/', admin, async () => ok(Object.keys(options.get('GroupRatio'))));
}

/**
 * The one place the console API audits administrative changes (docs/adr/0045): an `onRoute` hook on the `/api`
 * scope, registered before any module, wraps the handler of every route an administrator's gate guards whose method
 * changes something. The change and its audit row then run in one transaction (core/src/audit/audited.ts); a new
 * route is covered the moment it is registered, and described in audited-routes.ts.
 */
import { type AuditActor, type AuditSubject, audited } from '@turnpike/core/audit/audited';
import { AuditActorType, AuditKind, Role } from '@turnpike/core/domain/closed-sets';
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import type { RoleGate } from '../../http/auth.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { auditOf, isReadOnly, type RouteAudit } from './audited-routes.ts';

const CHANGING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The highest least-role a route's gates carry (see `requireRole`), or undefined when it has none. */
export function gateRoleOf(route: Pick<RouteOptions, 'preHandler' | 'onRequest'>): number | undefined {
  let highest: number | undefined;
  for (const hooks of [route.preHandler, route.onRequest]) {
    const list: unknown[] = Array.isArray(hooks) ? hooks : hooks ? [hooks] : [];
    for (const hook of list) {
      const minRole = (hook as Partial<RoleGate>).minRole;
      if (typeof minRole === 'number' && (highest === undefined || minRole > highest)) highest = minRole;
    }
  }
  return highest;
}

/** Whether a route is an administrative change: an administrator's gate and a method that changes something. */
export function isAdministrativeChange(
  route: Pick<RouteOptions, 'method' | 'preHandler' | 'onRequest'>,
): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const role = gateRoleOf(route);
  return role !== undefined && role >= Role.Admin && methods.some((m) => CHANGING_METHODS.has(m));
}

function actorOf(request: FastifyRequest): AuditActor {
  const auth = request.auth;
  // The gate ran before the handler: a handler without a user is not reached. Named all the same, never guessed.
  if (!auth) return { type: AuditActorType.User, id: 0, name: '' };
  return {
    type: auth.viaAccessToken ? AuditActorType.Token : AuditActorType.User,
    id: auth.user.id,
    name: auth.user.username,
  };
}

/** An undescribed route: audited all the same, of kind `other`, with what it was asked. */
const UNDESCRIBED: RouteAudit = { kind: AuditKind.Other, action: 'change' };

function subjectOf(audit: RouteAudit, request: FastifyRequest, ctx: RouteContext): AuditSubject<unknown> {
  const { targets, state } = audit;
  return {
    kind: audit.kind,
    action: audit.action,
    targets: targets ? () => targets(request, ctx.deps) : undefined,
    targetsOf: audit.targetsOf,
    load: state ? state(ctx.deps) : undefined,
  };
}

/** Adds the hook to `app` (the `/api` scope): call it before any module registers its routes. */
export function registerAuditHook(app: FastifyInstance, ctx: RouteContext): void {
  app.addHook('onRoute', (route) => {
    if (!isAdministrativeChange(route)) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const method = methods.find((m) => CHANGING_METHODS.has(m)) ?? String(methods[0]);
    const entry = auditOf(method, route.url);
    if (entry && isReadOnly(entry)) return;
    const audit = entry ?? UNDESCRIBED;
    const source = `${method} ${route.url}`;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function auditedHandler(request, reply) {
      return audited(
        ctx.deps,
        actorOf(request),
        {
          source,
          ip: request.ip,
          userAgent: request.headers['user-agent'],
          requestId: request.id,
          request: audit.request ? audit.request(request) : (request.body ?? request.query),
        },
        subjectOf(audit, request, ctx),
        () => Promise.resolve(handler.call(this, request, reply)),
      );
    };
  });
}

/**
 * What each administrative route changes, for its audit row (docs/adr/0045): the kind, the action, the ids it
 * touches (from the request before it runs, from its answer after) and the reader of their state. Every route an
 * administrator's gate guards with a method that changes something (POST, PUT, PATCH, DELETE) is audited whether or
 * not it is listed here (audit-hook.ts): a route missing from this table still gets a row, of kind `other` with its
 * request, and the test that walks the route table (audit.int.test.ts) fails until it is described. A route that
 * changes nothing despite its method is listed as read-only, with why.
 */
import { channels } from '@turnpike/core/db/schema/channels';
import { AuditKind, ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { and, eq, isNull, ne } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.ts';
import {
  channelState,
  contentLogSwitchState,
  optionState,
  planState,
  redemptionState,
  type StateReader,
  subscriptionState,
  userState,
} from './states.ts';

export interface RouteAudit {
  readonly kind: AuditKind;
  readonly action: string;
  /** The ids the call touches, known from the request (an update, a delete). */
  readonly targets?: (
    request: FastifyRequest,
    deps: AppDeps,
  ) => readonly string[] | Promise<readonly string[]>;
  /** The ids known from the answer only (a create); it gets the handler's answer (the envelope). */
  readonly targetsOf?: (answer: unknown) => readonly string[];
  readonly state?: StateReader;
  /** What the row keeps of the request, when its body alone would mislead (an option's key and value). */
  readonly request?: (request: FastifyRequest) => unknown;
}

/** A route that changes nothing though its method says it might: why it needs no audit row. */
export interface ReadOnlyRoute {
  readonly readOnly: string;
}

type Entry = RouteAudit | ReadOnlyRoute;

export const isReadOnly = (entry: Entry): entry is ReadOnlyRoute => 'readOnly' in entry;

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

const idText = (value: unknown): string | undefined =>
  typeof value === 'number' || (typeof value === 'string' && value !== '') ? String(value) : undefined;

/** A field of the body (the reference's wrapped channel body, `{ channel: {...} }`, read through). */
function bodyField(request: FastifyRequest, field: string): unknown {
  const body = record(request.body);
  return body[field] ?? record(body.channel)[field];
}

const fromBody =
  (field = 'id') =>
  (request: FastifyRequest): string[] => {
    const id = idText(bodyField(request, field));
    return id === undefined ? [] : [id];
  };

const fromBodyList =
  (field = 'ids') =>
  (request: FastifyRequest): string[] => {
    const list = bodyField(request, field);
    return Array.isArray(list) ? list.map(idText).filter((id): id is string => id !== undefined) : [];
  };

const fromParams = (request: FastifyRequest): string[] => {
  const id = idText(record(request.params).id);
  return id === undefined ? [] : [id];
};

/** The `data` of an envelope: one row's id, or each id of a list of rows. */
const fromAnswer = (answer: unknown): string[] => {
  const data = record(answer).data;
  const rows = Array.isArray(data) ? data : [data];
  return rows.map((row) => idText(record(row).id)).filter((id): id is string => id !== undefined);
};

async function channelIdsWhere(deps: AppDeps, where: ReturnType<typeof eq> | undefined): Promise<string[]> {
  const rows = await deps.db.select({ id: channels.id }).from(channels).where(where);
  return rows.map((row) => String(row.id));
}

const channelsOfTag = (request: FastifyRequest, deps: AppDeps) => {
  const tag = bodyField(request, 'tag');
  return typeof tag === 'string' ? channelIdsWhere(deps, eq(channels.tag, tag.trim())) : [];
};

/** An option's save as the row keeps it: the key named, its value under it (masked when the option is secret). */
const optionRequest = (request: FastifyRequest) => {
  const body = record(request.body);
  return typeof body.key === 'string' ? { [body.key]: body.value } : body;
};

const channel = (action: string, more: Partial<RouteAudit> = {}): RouteAudit => ({
  kind: AuditKind.Channel,
  action,
  state: channelState,
  ...more,
});

/** Keyed `METHOD /api/path` as Fastify registers the route. */
export const auditedRoutes: Readonly<Record<string, Entry>> = {
  // Channels
  'POST /api/channel/': channel('create', { targetsOf: fromAnswer }),
  'PUT /api/channel/': channel('update', { targets: fromBody('id') }),
  'POST /api/channel/copy/:id': channel('copy', { targets: fromParams, targetsOf: fromAnswer }),
  'DELETE /api/channel/:id': channel('delete', { targets: fromParams }),
  'DELETE /api/channel/disabled': channel('delete disabled', {
    targets: (_request, deps) =>
      channelIdsWhere(deps, and(ne(channels.status, ChannelStatus.Enabled), isNull(channels.sourceKind))),
  }),
  'POST /api/channel/batch': channel('delete', { targets: fromBodyList('ids') }),
  'POST /api/channel/batch/tag': channel('set tag', { targets: fromBodyList('ids') }),
  'POST /api/channel/multi_key/manage': channel('manage keys', { targets: fromBody('channel_id') }),
  'POST /api/channel/fix': { kind: AuditKind.Channel, action: 'rebuild abilities' },
  'POST /api/channel/tag/enabled': channel('enable tag', { targets: channelsOfTag }),
  'POST /api/channel/tag/disabled': channel('disable tag', { targets: channelsOfTag }),
  'PUT /api/channel/tag': channel('edit tag', { targets: channelsOfTag }),
  'POST /api/channel/fetch_models': {
    readOnly: 'asks a provider for its model list with the key given; stores nothing',
  },

  // Options, prices among them
  'PUT /api/option/': {
    kind: AuditKind.Option,
    action: 'update',
    targets: fromBody('key'),
    state: optionState,
    request: optionRequest,
  },
  'POST /api/option/rest_model_ratio': {
    kind: AuditKind.Option,
    action: 'reset',
    targets: () => ['ModelRatio'],
    state: optionState,
  },

  // Users, balances among them
  'POST /api/user/': { kind: AuditKind.User, action: 'create', targetsOf: fromAnswer, state: userState },
  'PUT /api/user/': { kind: AuditKind.User, action: 'update', targets: fromBody('id'), state: userState },
  'DELETE /api/user/:id': { kind: AuditKind.User, action: 'delete', targets: fromParams, state: userState },
  // The second factors themselves are secrets: the row says whose were reset, not what they were.
  'DELETE /api/user/:id/2fa': { kind: AuditKind.User, action: 'reset two-factor', targets: fromParams },
  'DELETE /api/user/:id/reset_passkey': {
    kind: AuditKind.User,
    action: 'reset passkeys',
    targets: fromParams,
  },
  'POST /api/user/manage': {
    kind: AuditKind.User,
    action: 'manage',
    targets: fromBody('id'),
    state: userState,
  },

  // Redemption codes (the codes themselves are secrets: a create keeps how many and their quota, not the keys)
  'POST /api/redemption/': { kind: AuditKind.Redemption, action: 'create' },
  'PUT /api/redemption/': {
    kind: AuditKind.Redemption,
    action: 'update',
    targets: fromBody('id'),
    state: redemptionState,
  },
  'DELETE /api/redemption/:id': {
    kind: AuditKind.Redemption,
    action: 'delete',
    targets: fromParams,
    state: redemptionState,
  },

  // Subscription plans and users' subscriptions (docs/adr/0049)
  'POST /api/subscription/admin/plans': {
    kind: AuditKind.Plan,
    action: 'create',
    targetsOf: fromAnswer,
    state: planState,
  },
  'PUT /api/subscription/admin/plans/:id': {
    kind: AuditKind.Plan,
    action: 'update',
    targets: fromParams,
    state: planState,
  },
  'PATCH /api/subscription/admin/plans/:id': {
    kind: AuditKind.Plan,
    action: 'enable or disable',
    targets: fromParams,
    state: planState,
  },
  'POST /api/subscription/admin/bind': {
    kind: AuditKind.Plan,
    action: 'grant',
    targetsOf: fromAnswer,
    state: subscriptionState,
  },
  'POST /api/subscription/admin/users/:id/subscriptions': {
    kind: AuditKind.Plan,
    action: 'grant',
    targetsOf: fromAnswer,
    state: subscriptionState,
  },
  'POST /api/subscription/admin/user_subscriptions/:id/invalidate': {
    kind: AuditKind.Plan,
    action: 'cancel subscription',
    targets: fromParams,
    state: subscriptionState,
  },

  // Logs
  'DELETE /api/log/': { kind: AuditKind.Log, action: 'delete old', request: (request) => request.query },

  // Content logs of a token (an administrator's switch; a group's is the ContentLogGroups option)
  'PUT /api/content_log/token/:id': {
    kind: AuditKind.Token,
    action: 'content log',
    targets: fromParams,
    state: contentLogSwitchState,
  },
};

/** The description of a route, or undefined when nobody wrote one yet. */
export function auditOf(method: string, url: string): Entry | undefined {
  return auditedRoutes[`${method} ${url}`] ?? auditedRoutes[`${method} ${url.replace(/(.)\/$/, '$1')}`];
}

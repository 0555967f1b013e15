/**
 * `POST /pg/chat/completions`, the console playground (reference §2.3): a chat request signed by the console's
 * session cookie instead of an API key, with `group` in the body naming one of the user's usable groups (empty:
 * the user's own). Billed to the user's quota only — no token balance is involved — and logged under the token
 * name `playground-<group>`. An access token is refused: the playground is for people in the console.
 *
 * The user is read from the database on each call (like every console call), not from the token cache: the
 * playground is not the relay's hot path.
 */

import { usableGroups } from '@turnpike/core/domain/groups';
import { NEVER_EXPIRES, TokenStatus } from '@turnpike/core/domain/tokens';
import { UserStatus } from '@turnpike/core/domain/users';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { readSessionCookie, type SessionCodec } from '@turnpike/core/sessions/session-codec';
import { isSessionLive } from '@turnpike/core/sessions/session-end';
import type { RelayReply, RelayRequest } from '../contract.ts';
import { invalidRequest, localError } from '../errors.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { chatSpec } from '../formats/openai/text-endpoints.ts';
import { type Caller, readQuotaWindows, type TokenSnapshot, type UserSnapshot } from '../state/auth-cache.ts';
import type { RelayContext } from './context.ts';
import { limitRequest, relayAs } from './relay.ts';
import { isRecord, sendError } from './respond.ts';

const unauthorized = (code: string, message: string) =>
  localError(401, code, message, 'invalid_request_error');

function acceptsUnsetRatio(setting: string): boolean {
  try {
    return (
      (JSON.parse(setting) as { accept_unset_model_ratio_model?: unknown })
        ?.accept_unset_model_ratio_model === true
    );
  } catch {
    return false;
  }
}

export async function handlePlayground(
  ctx: RelayContext,
  sessions: SessionCodec,
  request: RelayRequest,
  reply: RelayReply,
): Promise<RelayReply | undefined> {
  const startedAt = performance.now();
  const session = sessions.decode(readSessionCookie(request.headers.cookie));
  if (!session.uid) {
    return sendError(
      request,
      reply,
      request.headers.authorization
        ? unauthorized(
            'access_token_not_allowed',
            'the playground needs a signed-in console session; access tokens and API keys are not accepted',
          )
        : unauthorized('unauthenticated', 'not signed in or the session has expired'),
      openAiChatIngress,
    );
  }
  const claimed = request.headers['new-api-user'];
  if (claimed !== undefined && String(claimed) !== String(session.uid))
    return sendError(
      request,
      reply,
      unauthorized('unauthenticated', 'the New-Api-User header does not match the signed-in user'),
      openAiChatIngress,
    );
  const row = await createUserRepo(ctx.deps.db).findById(session.uid);
  if (!row || !isSessionLive(session, row))
    return sendError(
      request,
      reply,
      unauthorized('unauthenticated', 'not signed in or the session has expired'),
      openAiChatIngress,
    );
  if (row.status !== UserStatus.Enabled)
    return sendError(
      request,
      reply,
      localError(403, 'user_disabled', 'this user has been disabled', 'invalid_request_error'),
      openAiChatIngress,
    );

  if (!isRecord(request.body))
    return sendError(
      request,
      reply,
      invalidRequest('the request body must be a JSON object'),
      openAiChatIngress,
    );
  const { group: asked, ...body } = request.body;
  if (asked !== undefined && asked !== null && typeof asked !== 'string')
    return sendError(request, reply, invalidRequest('group must be a string'), openAiChatIngress);
  const { options } = ctx.deps;
  const groupRatio = options.get('GroupRatio');
  const group = asked ? asked : row.group;
  if (asked) {
    const allowed = usableGroups({ ...options.get('UserUsableGroups') }, { ...groupRatio }, row.group);
    // A usable group missing from GroupRatio is priced at ratio 1, as everywhere else.
    if (!(asked in allowed))
      return sendError(
        request,
        reply,
        localError(403, 'group_forbidden', `you may not use the group ${asked}`, 'invalid_request_error'),
        openAiChatIngress,
      );
  }
  request.body = body;

  const user: UserSnapshot = {
    id: row.id,
    username: row.username,
    role: row.role,
    status: row.status,
    group: row.group,
    acceptUnsetModelRatio: acceptsUnsetRatio(row.setting),
    quotaWindows: readQuotaWindows(row.quotaWindows, (err) =>
      request.log.warn({ err }, 'a user has quota windows the relay cannot read'),
    ),
    loadedAt: Date.now(),
  };
  // No token row: id 0 is never written to (the batching writer skips it), and the quota is the user's.
  const token: TokenSnapshot = {
    id: 0,
    userId: row.id,
    key: '',
    name: `playground-${group}`,
    status: TokenStatus.Enabled,
    expiredTime: NEVER_EXPIRES,
    remainQuota: 0,
    unlimitedQuota: true,
    modelLimits: undefined,
    ipRules: [],
    group,
    loadedAt: Date.now(),
  };
  const caller: Caller = { user, token, group, forcedChannelId: undefined };
  const limited = await limitRequest(ctx, request, reply, caller);
  if (limited) return sendError(request, reply, limited, openAiChatIngress);
  return relayAs(ctx, {
    request,
    reply,
    spec: chatSpec,
    ingress: openAiChatIngress,
    caller,
    startedAt,
    steps: undefined,
    isPlayground: true,
  });
}

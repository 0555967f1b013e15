/**
 * Token auth for `/v1/*` (reference §3.2 and the group / IP / model checks of §4.1), answered from the
 * in-memory auth cache. Every refusal is a local error in OpenAI's shape: 401 for a missing or unusable token,
 * 403 for what the token or its owner may not do.
 */

import { usableGroups } from '@turnpike/core/domain/groups';
import { isIpAllowed, NEVER_EXPIRES, TokenStatus } from '@turnpike/core/domain/tokens';
import { isAdmin, UserStatus } from '@turnpike/core/domain/users';
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import type { AuthCache, Caller } from '../state/auth-cache.ts';

export type AuthResult =
  | { ok: true; caller: Caller }
  | {
      ok: false;
      error: RelayError;
      /** An enabled token found expired or spent: the status it should be given (reference §3.2). */
      markToken?: { id: number; status: TokenStatus };
    };

/** `sk-abc***xyz`, for messages: enough to recognise one's own key, not enough to use it. */
export const maskKey = (key: string): string =>
  key.length <= 8 ? 'sk-***' : `sk-${key.slice(0, 3)}***${key.slice(-3)}`;

const unauthorized = (message: string) =>
  localError(401, 'invalid_api_key', message, 'invalid_request_error');
const forbidden = (code: string, message: string) => localError(403, code, message, 'invalid_request_error');

/** The key and the optional forced channel from an Authorization header. */
export function parseBearer(
  header: string | undefined,
): { key: string; channelId: string | undefined } | undefined {
  if (!header) return undefined;
  let value = header.trim();
  if (/^bearer\s+/i.test(value)) value = value.replace(/^bearer\s+/i, '');
  if (value.startsWith('sk-')) value = value.slice(3);
  const [key, channelId] = value.split('-');
  if (!key) return undefined;
  return { key, channelId };
}

export interface AuthenticateInput {
  readonly authorization: string | undefined;
  readonly ip: string;
  /** `UserUsableGroups` and `GroupRatio`. */
  readonly selectableGroups: Readonly<Record<string, string>>;
  readonly groupRatio: Readonly<Record<string, number>>;
  readonly nowSeconds: number;
}

export async function authenticate(cache: AuthCache, input: AuthenticateInput): Promise<AuthResult> {
  const parsed = parseBearer(input.authorization);
  if (!parsed)
    return { ok: false, error: unauthorized('no API key provided (Authorization: Bearer sk-...)') };
  const found = /^[0-9a-zA-Z]{1,64}$/.test(parsed.key) ? await cache.lookup(parsed.key) : undefined;
  if (!found) return { ok: false, error: unauthorized(`invalid API key ${maskKey(parsed.key)}`) };
  const { token, user } = found;
  const masked = maskKey(token.key);
  if (token.status === TokenStatus.Exhausted)
    return { ok: false, error: unauthorized(`API key ${masked} has used up its quota`) };
  if (token.status === TokenStatus.Expired)
    return { ok: false, error: unauthorized(`API key ${masked} has expired`) };
  if (token.status !== TokenStatus.Enabled)
    return { ok: false, error: unauthorized(`API key ${masked} is disabled`) };
  if (token.expiredTime !== NEVER_EXPIRES && token.expiredTime <= input.nowSeconds)
    return {
      ok: false,
      error: unauthorized(`API key ${masked} has expired`),
      markToken: { id: token.id, status: TokenStatus.Expired },
    };
  if (!token.unlimitedQuota && token.remainQuota <= 0)
    return {
      ok: false,
      error: unauthorized(`API key ${masked} has used up its quota`),
      markToken: { id: token.id, status: TokenStatus.Exhausted },
    };
  if (user.status !== UserStatus.Enabled)
    return { ok: false, error: forbidden('user_disabled', 'this user has been disabled') };

  let forcedChannelId: number | undefined;
  if (parsed.channelId !== undefined && parsed.channelId !== '') {
    if (!isAdmin(user.role))
      return { ok: false, error: forbidden('channel_forbidden', 'only administrators may choose a channel') };
    forcedChannelId = Number(parsed.channelId);
    if (!Number.isInteger(forcedChannelId) || forcedChannelId <= 0)
      return {
        ok: false,
        error: localError(400, 'invalid_channel_id', 'invalid channel id', 'invalid_request_error'),
      };
  }

  if (!isIpAllowed(token.ipRules, input.ip))
    return { ok: false, error: forbidden('ip_not_allowed', `your IP ${input.ip} may not use this API key`) };

  let group = user.group;
  if (token.group !== '') {
    const allowed = usableGroups({ ...input.selectableGroups }, { ...input.groupRatio }, user.group);
    if (!(token.group in allowed))
      return {
        ok: false,
        error: forbidden('group_forbidden', `the group ${token.group} of this API key is disabled`),
      };
    if (!(token.group in input.groupRatio))
      return {
        ok: false,
        error: forbidden('group_forbidden', `the group ${token.group} is no longer offered`),
      };
    group = token.group;
  }
  return { ok: true, caller: { token, user, group, forcedChannelId } };
}

/** Whether the token may use a model (its model limits, when enabled). */
export function checkModelAllowed(caller: Caller, model: string): RelayError | undefined {
  const limits = caller.token.modelLimits;
  if (limits === undefined || limits.has(model)) return undefined;
  return forbidden('model_not_allowed', `this API key may not use the model ${model}`);
}

import { Role, UserStatus } from '@turnpike/core/domain/closed-sets';
import type { ManageAction, UserRow } from './api/users.ts';

export type UserAction = ManageAction | 'edit';

/**
 * What `actor` may do to `target` (spec 01 section 6): nothing on a deregistered user or one of the same or higher
 * level; only root promotes (to admin) and demotes admins; status 3 cannot be enabled from the list.
 */
export function allowedActions(
  actorRole: number,
  target: Pick<UserRow, 'role' | 'status' | 'DeletedAt'>,
): UserAction[] {
  if (target.DeletedAt) return [];
  if (actorRole <= target.role) return [];
  const out: UserAction[] = ['edit'];
  if (actorRole >= Role.Root && target.role < Role.Admin) out.push('promote');
  if (actorRole >= Role.Root && target.role >= Role.Admin && target.role < Role.Root) out.push('demote');
  if (target.status === UserStatus.Enabled) out.push('disable');
  if (target.status === UserStatus.Disabled) out.push('enable');
  out.push('delete');
  return out;
}

export type RoleName = 'common' | 'admin' | 'root' | 'unknown';

export function roleName(role: number): RoleName {
  if (role === Role.User) return 'common';
  if (role === Role.Admin) return 'admin';
  if (role === Role.Root) return 'root';
  return 'unknown';
}

export type StatusName = 'active' | 'banned' | 'other' | 'unknown';

export function statusName(status: number): StatusName {
  if (status === UserStatus.Enabled) return 'active';
  if (status === UserStatus.Disabled) return 'banned';
  if (status === 3) return 'other';
  return 'unknown';
}

export const PASSWORD_MIN = 8;

/** Add user: username and password are required. */
export function validateNewUser(v: { username: string; password: string }): string | null {
  if (!v.username.trim() || !v.password) return 'validation.required';
  if (v.password.length < PASSWORD_MIN) return 'validation.passwordMin';
  return null;
}

/** Edit user: a new password, when given, has at least 8 characters; quota is a whole number of 0 or more. */
export function validateUserUpdate(v: { username: string; password: string; quota: string }): string | null {
  if (!v.username.trim()) return 'validation.usernameRequired';
  if (v.password && v.password.length < PASSWORD_MIN) return 'validation.passwordMin';
  const q = Number(v.quota);
  if (v.quota.trim() === '' || !Number.isInteger(q)) return 'validation.quotaInteger';
  if (q < 0) return 'validation.quotaNegative';
  return null;
}

/** The quota-add dialog: a signed whole amount, not zero. */
export function validateQuotaDelta(text: string): string | null {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n)) return 'validation.quotaDeltaInteger';
  if (n === 0) return 'validation.quotaDeltaZero';
  return null;
}

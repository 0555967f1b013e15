import { Role, UserStatus } from './closed-sets.ts';

export { Role, UserStatus } from './closed-sets.ts';

export const isAdmin = (role: number): boolean => role >= Role.Admin;
export const isRoot = (role: number): boolean => role >= Role.Root;

export const ManageAction = ['promote', 'demote', 'disable', 'enable', 'delete'] as const;
export type ManageAction = (typeof ManageAction)[number];

export interface RoleHolder {
  readonly id: number;
  readonly role: number;
}

/**
 * Why `actor` may not perform `action` on `target`, or undefined when it may. Rules: nobody acts on a user of the
 * same or higher role (root on itself excepted, for editing); only root promotes; root is never disabled,
 * deleted or demoted.
 */
export function whyCannotManage(
  actor: RoleHolder,
  target: RoleHolder,
  action: ManageAction | 'edit',
): string | undefined {
  if (isRoot(target.role) && (action === 'disable' || action === 'delete' || action === 'demote')) {
    return `the super administrator cannot be ${action === 'delete' ? 'deleted' : action === 'disable' ? 'disabled' : 'demoted'}`;
  }
  const isSelfRootEdit = action === 'edit' && isRoot(actor.role) && actor.id === target.id;
  if (actor.role <= target.role && !isSelfRootEdit) {
    return 'you cannot act on a user of the same or a higher role';
  }
  if (action === 'promote' && !isRoot(actor.role))
    return 'only the super administrator can promote users to administrator';
  if (action === 'promote' && isAdmin(target.role)) return 'this user is already an administrator';
  if (action === 'demote' && target.role <= Role.User) return 'this user is already a regular user';
  return undefined;
}

/** The role a new user may be given by `actorRole`: strictly below the actor's own. */
export const canAssignRole = (actorRole: number, role: number): boolean =>
  role < actorRole && (Object.values(Role) as number[]).includes(role);

/** What a manage action leaves behind: the new role and status, and whether the user is deregistered. */
export interface ManageOutcome {
  readonly role: number;
  readonly status: number;
  readonly deleted: boolean;
}

/**
 * The state `action` moves `target` to, once `whyCannotManage` has allowed it. Promotion makes an administrator,
 * demotion a regular user; deletion is a deregistration (soft delete), so the row and its name stay.
 */
export function applyManageAction(
  target: { readonly role: number; readonly status: number },
  action: ManageAction,
): ManageOutcome {
  switch (action) {
    case 'promote':
      return { role: Role.Admin, status: target.status, deleted: false };
    case 'demote':
      return { role: Role.User, status: target.status, deleted: false };
    case 'disable':
      return { role: target.role, status: UserStatus.Disabled, deleted: false };
    case 'enable':
      return { role: target.role, status: UserStatus.Enabled, deleted: false };
    case 'delete':
      return { role: target.role, status: target.status, deleted: true };
  }
}

import { describe, expect, it } from 'vitest';
import {
  applyManageAction,
  canAssignRole,
  ManageAction,
  Role,
  UserStatus,
  whyCannotManage,
} from './users.ts';

type Action = ManageAction | 'edit';
const actions: readonly Action[] = [...ManageAction, 'edit'];
const roles = { user: Role.User, admin: Role.Admin, root: Role.Root } as const;
type RoleName = keyof typeof roles;

/**
 * The complete rule table, written out by hand: for each actor role and target role (different people), the
 * actions that are allowed. Everything not listed must be refused.
 */
const allowed: Record<RoleName, Record<RoleName, readonly Action[]>> = {
  user: { user: [], admin: [], root: [] },
  admin: { user: ['disable', 'enable', 'delete', 'edit'], admin: [], root: [] },
  root: {
    user: ['promote', 'disable', 'enable', 'delete', 'edit'],
    admin: ['demote', 'disable', 'enable', 'delete', 'edit'],
    root: [],
  },
};

describe('whyCannotManage', () => {
  for (const [actorName, actorRole] of Object.entries(roles) as [RoleName, number][]) {
    for (const [targetName, targetRole] of Object.entries(roles) as [RoleName, number][]) {
      for (const action of actions) {
        const expected = allowed[actorName][targetName].includes(action);
        it(`${actorName} ${expected ? 'may' : 'may not'} ${action} another ${targetName}`, () => {
          const reason = whyCannotManage({ id: 1, role: actorRole }, { id: 2, role: targetRole }, action);
          if (expected) expect(reason).toBeUndefined();
          else expect(reason).toEqual(expect.any(String));
        });
      }
    }
  }

  it('lets root edit its own account but never demote, disable or delete it', () => {
    const root = { id: 1, role: Role.Root };
    expect(whyCannotManage(root, root, 'edit')).toBeUndefined();
    expect(whyCannotManage(root, root, 'demote')).toBe('the super administrator cannot be demoted');
    expect(whyCannotManage(root, root, 'disable')).toBe('the super administrator cannot be disabled');
    expect(whyCannotManage(root, root, 'delete')).toBe('the super administrator cannot be deleted');
  });

  it('does not let an admin or a user act on themselves', () => {
    for (const role of [Role.User, Role.Admin]) {
      const self = { id: 7, role };
      for (const action of actions) expect(whyCannotManage(self, self, action)).toEqual(expect.any(String));
    }
  });

  it('explains each refusal in words the console can show', () => {
    const admin = { id: 1, role: Role.Admin };
    const root = { id: 2, role: Role.Root };
    const user = { id: 3, role: Role.User };
    expect(whyCannotManage(admin, { id: 4, role: Role.Admin }, 'disable')).toBe(
      'you cannot act on a user of the same or a higher role',
    );
    expect(whyCannotManage(admin, user, 'promote')).toBe(
      'only the super administrator can promote users to administrator',
    );
    expect(whyCannotManage(root, { id: 5, role: Role.Admin }, 'promote')).toBe(
      'this user is already an administrator',
    );
    expect(whyCannotManage(root, user, 'demote')).toBe('this user is already a regular user');
  });
});

describe('applyManageAction', () => {
  const target = { role: Role.User, status: UserStatus.Enabled };
  it('promotes to admin and demotes to a regular user, keeping the status', () => {
    expect(applyManageAction(target, 'promote')).toEqual({
      role: Role.Admin,
      status: UserStatus.Enabled,
      deleted: false,
    });
    expect(applyManageAction({ role: Role.Admin, status: UserStatus.Disabled }, 'demote')).toEqual({
      role: Role.User,
      status: UserStatus.Disabled,
      deleted: false,
    });
  });
  it('disables and enables, keeping the role', () => {
    expect(applyManageAction({ role: Role.Admin, status: UserStatus.Enabled }, 'disable')).toEqual({
      role: Role.Admin,
      status: UserStatus.Disabled,
      deleted: false,
    });
    expect(applyManageAction({ role: Role.User, status: UserStatus.Disabled }, 'enable')).toEqual({
      role: Role.User,
      status: UserStatus.Enabled,
      deleted: false,
    });
  });
  it('deletes by marking the user deregistered', () => {
    expect(applyManageAction(target, 'delete')).toEqual({ ...target, deleted: true });
  });
});

describe('canAssignRole', () => {
  it('allows only known roles strictly below the actor', () => {
    expect(canAssignRole(Role.Admin, Role.User)).toBe(true);
    expect(canAssignRole(Role.Admin, Role.Admin)).toBe(false);
    expect(canAssignRole(Role.Admin, Role.Root)).toBe(false);
    expect(canAssignRole(Role.Root, Role.Admin)).toBe(true);
    expect(canAssignRole(Role.Root, Role.User)).toBe(true);
    expect(canAssignRole(Role.Root, Role.Root)).toBe(false);
    expect(canAssignRole(Role.Root, 5)).toBe(false);
    expect(canAssignRole(Role.User, Role.User)).toBe(false);
  });
});

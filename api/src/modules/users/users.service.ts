import type { Page } from '@turnpike/core/contracts/envelope';
import {
  type CreateUser,
  type ManageUserResult,
  toUserView,
  type UpdateUser,
  type UserView,
} from '@turnpike/core/contracts/users';
import { hashPassword } from '@turnpike/core/crypto/password';
import { type NewUser, users } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import {
  applyManageAction,
  canAssignRole,
  type ManageAction,
  Role,
  whyCannotManage,
} from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { createUserRepo, type UserSearch } from '@turnpike/core/repos/user.repo';
import { eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { formatQuota } from '../../http/quota-text.ts';
import { createAuthService } from '../auth/auth.service.ts';
import { createQuotaWindowService } from '../quota-windows/quota-windows.service.ts';

const USERNAME_TAKEN = 'this username is already taken';
const EMAIL_TAKEN = 'this email address is already in use';

/** True when the database refused a write for breaking a unique index (two admins racing for one name). */
function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === '23505') return true;
  }
  return false;
}

function refuseUnless(actor: User, target: User, action: ManageAction | 'edit'): void {
  const reason = whyCannotManage(actor, target, action);
  if (reason) throw new AppError('FORBIDDEN', reason);
}

/**
 * Administration of other users. Every rule of spec 01 section 6 is checked here against the acting user as read
 * from the database on this request, so a demoted admin loses these powers on the next call.
 */
export function createUsersService(deps: AppDeps) {
  const repo = createUserRepo(deps.db);
  const windows = createQuotaWindowService(deps);
  const changed = (id: number) => deps.bus.publish({ type: 'users.changed', ids: [id] });

  /** A user that still exists (not deregistered), or a 404. */
  async function activeTarget(id: number): Promise<User> {
    const target = await repo.findById(id);
    if (!target) throw new AppError('NOT_FOUND', 'user not found');
    return target;
  }

  return {
    /** The user for the edit sheet: with the state of their quota windows and their group's. */
    view: async (user: User) => ({ ...toUserView(user), ...(await windows.ofUser(user)) }),

    /** A page of users, newest first, deregistered ones included; never passwords or access tokens. */
    async list(search: UserSearch, page: { page: number; pageSize: number }): Promise<Page<UserView>> {
      const { rows, total } = await repo.listPage(search, page);
      return {
        items: rows.map((row) => toUserView(row)),
        total,
        page: page.page,
        page_size: page.pageSize,
      };
    },

    /** One user for the edit sheet; only users below the actor's role (root may read its own account). */
    async get(actor: User, id: number): Promise<User> {
      const target = await repo.findById(id, { includeDeleted: true });
      if (!target) throw new AppError('NOT_FOUND', 'user not found');
      refuseUnless(actor, target, 'edit');
      return target;
    },

    /** Creates a user of a role below the actor's own (a regular user unless root says otherwise). */
    async create(actor: User, input: CreateUser): Promise<UserView> {
      const role = input.role ?? Role.User;
      if (!canAssignRole(actor.role, role)) {
        throw new AppError('FORBIDDEN', 'you cannot create a user with a role equal to or higher than yours');
      }
      if (await repo.isUsernameTaken(input.username)) throw new AppError('CONFLICT', USERNAME_TAKEN);
      const newUserQuota = deps.options.get('QuotaForNewUser');
      const quotaPerUnit = deps.options.get('QuotaPerUnit');
      const row: NewUser = {
        username: input.username,
        password: await hashPassword(input.password),
        displayName: input.display_name || input.username,
        role,
        quota: newUserQuota,
        affCode: await createAuthService(deps).newAffCode(),
        createdTime: nowSeconds(),
      };
      try {
        const user = await deps.db.transaction(async (tx) => {
          const created = await createUserRepo(tx).insert(row);
          if (newUserQuota > 0) {
            await createLogRepo(tx).system(
              created.id,
              created.username,
              `new user bonus: ${formatQuota(newUserQuota, quotaPerUnit)}`,
            );
          }
          return created;
        });
        return toUserView(user);
      } catch (error) {
        if (isUniqueViolation(error)) throw new AppError('CONFLICT', USERNAME_TAKEN, { cause: error });
        throw error;
      }
    },

    /**
     * Edits username, display name, password, email, group and quota. A quota change writes a manage log on the
     * user, with the old and new balance read under a row lock so concurrent edits log what really happened. A new
     * password ends the user's sessions (the database moves the session generation, docs/adr/0020).
     */
    async update(actor: User, input: UpdateUser): Promise<User> {
      const target = await activeTarget(input.id);
      refuseUnless(actor, target, 'edit');
      const patch: Partial<NewUser> = {};
      if (input.username !== undefined && input.username !== target.username) {
        if (await repo.isUsernameTaken(input.username, target.id))
          throw new AppError('CONFLICT', USERNAME_TAKEN);
        patch.username = input.username;
      }
      if (input.display_name !== undefined) patch.displayName = input.display_name;
      if (input.email !== undefined && input.email !== target.email) {
        if (input.email && (await repo.isEmailTaken(input.email, target.id)))
          throw new AppError('CONFLICT', EMAIL_TAKEN);
        patch.email = input.email;
      }
      if (input.group !== undefined) patch.group = input.group;
      // Only an administrator sets a user's windows (the user sees them); the relay reads them on users.changed.
      if (input.quota_windows !== undefined) patch.quotaWindows = input.quota_windows;
      if (input.password) patch.password = await hashPassword(input.password);
      const quotaPerUnit = deps.options.get('QuotaPerUnit');

      try {
        const updated = await deps.db.transaction(async (tx) => {
          const [locked] = await tx.select().from(users).where(eq(users.id, target.id)).for('update');
          if (!locked || locked.deletedAt) throw new AppError('NOT_FOUND', 'user not found');
          const quotaChanged = input.quota !== undefined && input.quota !== locked.quota;
          if (quotaChanged) patch.quota = input.quota;
          if (Object.keys(patch).length === 0) return locked;
          const row = await createUserRepo(tx).update(target.id, patch);
          if (!row) throw new AppError('NOT_FOUND', 'user not found');
          if (quotaChanged) {
            await createLogRepo(tx).manage(
              row.id,
              row.username,
              `administrator ${actor.username} changed the quota from ${formatQuota(locked.quota, quotaPerUnit)} to ${formatQuota(row.quota, quotaPerUnit)}`,
            );
          }
          return row;
        });
        await changed(target.id);
        return updated;
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new AppError('CONFLICT', patch.username ? USERNAME_TAKEN : EMAIL_TAKEN, { cause: error });
        }
        throw error;
      }
    },

    /**
     * promote / demote / disable / enable / delete. Deleting deregisters (soft delete): the row stays for logs,
     * the username stays taken, the access token stops working at once.
     */
    async manage(actor: User, id: number, action: ManageAction): Promise<ManageUserResult> {
      const target = await activeTarget(id);
      refuseUnless(actor, target, action);
      const outcome = applyManageAction(target, action);
      const row = await repo.update(target.id, {
        role: outcome.role,
        status: outcome.status,
        ...(outcome.deleted ? { deletedAt: new Date(), accessToken: null } : {}),
      });
      if (!row) throw new AppError('NOT_FOUND', 'user not found');
      await changed(target.id);
      return { role: row.role, status: row.status };
    },
  };
}

import { parseUserSetting, type UpdateSelf, type UserSetting } from '@turnpike/core/contracts/users';
import { hashPassword, verifyPassword } from '@turnpike/core/crypto/password';
import { randomString } from '@turnpike/core/crypto/random';
import { abilities, users } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { usableGroups } from '@turnpike/core/domain/groups';
import { isRoot } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { outboundPolicyOf, userAddressProblem } from '@turnpike/core/net/guarded-fetch';
import { createLogRepo } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { formatQuota } from '../../http/quota-text.ts';
import { createAuthService } from '../auth/auth.service.ts';

/** What a signed-in user may do to their own account. */
export function createSelfService(deps: AppDeps) {
  const repo = createUserRepo(deps.db);
  const changed = (id: number) => deps.bus.publish({ type: 'users.changed', ids: [id] });

  function groupsFor(userGroup?: string) {
    return usableGroups(deps.options.get('UserUsableGroups'), deps.options.get('GroupRatio'), userGroup);
  }

  return {
    groupsFor,

    /**
     * Username, display name and password; a new password needs the current one. Answers the saved row: a new
     * password has moved its session generation, ending the user's sessions (docs/adr/0020).
     */
    async update(user: User, input: UpdateSelf): Promise<User> {
      const patch: Partial<typeof users.$inferInsert> = {};
      if (input.username !== undefined && input.username !== user.username) {
        if (await repo.isUsernameTaken(input.username, user.id)) {
          throw new AppError('CONFLICT', 'this username is already taken');
        }
        patch.username = input.username;
      }
      if (input.display_name !== undefined) patch.displayName = input.display_name;
      if (input.password) {
        if (!input.original_password || !(await verifyPassword(input.original_password, user.password))) {
          throw new AppError('VALIDATION_FAILED', 'the current password is wrong');
        }
        patch.password = await hashPassword(input.password);
      }
      if (Object.keys(patch).length === 0) return user;
      const saved = await repo.update(user.id, patch);
      await changed(user.id);
      return saved ?? user;
    },

    /** Deregisters the account (soft delete); the super administrator cannot leave. */
    async deregister(user: User): Promise<void> {
      if (isRoot(user.role))
        throw new AppError('FORBIDDEN', 'the super administrator account cannot be deleted');
      await repo.update(user.id, { deletedAt: new Date(), accessToken: null });
      await changed(user.id);
    },

    /** A new system access token; the old one stops working. */
    async regenerateAccessToken(user: User): Promise<string> {
      const token = randomString(32);
      await repo.update(user.id, { accessToken: token });
      return token;
    },

    async affCode(user: User): Promise<string> {
      if (user.affCode) return user.affCode;
      const code = await createAuthService(deps).newAffCode();
      await repo.update(user.id, { affCode: code });
      return code;
    },

    /** Moves invite earnings into the balance, atomically and never more than there is. */
    async transferAffQuota(user: User, quota: number): Promise<void> {
      const quotaPerUnit = deps.options.get('QuotaPerUnit');
      if (quota < quotaPerUnit) {
        throw new AppError(
          'VALIDATION_FAILED',
          `the minimum transfer is ${formatQuota(quotaPerUnit, quotaPerUnit)}`,
        );
      }
      await deps.db.transaction(async (tx) => {
        const [moved] = await tx
          .update(users)
          .set({ affQuota: sql`${users.affQuota} - ${quota}`, quota: sql`${users.quota} + ${quota}` })
          .where(and(eq(users.id, user.id), sql`${users.affQuota} >= ${quota}`))
          .returning({ id: users.id });
        if (!moved) throw new AppError('VALIDATION_FAILED', 'the amount is more than your invite earnings');
        await createLogRepo(tx).system(
          user.id,
          user.username,
          `moved invite earnings to balance: ${formatQuota(quota, quotaPerUnit)}`,
        );
      });
      await changed(user.id);
    },

    /** Notification settings; an empty webhook secret keeps the stored one (secrets are never sent back). */
    async updateSetting(user: User, input: UserSetting): Promise<void> {
      // Names are checked again at each delivery (DNS can change); a literal address can be refused now.
      const problem =
        input.webhook_url &&
        userAddressProblem(
          input.webhook_url,
          outboundPolicyOf((key) => deps.options.get(key)),
        );
      if (problem) throw new AppError('VALIDATION_FAILED', `webhook_url ${problem}`);
      const stored = parseUserSetting(user.setting);
      const webhookSecret = input.webhook_secret || stored.webhook_secret || '';
      await repo.update(user.id, {
        setting: JSON.stringify({ ...stored, ...input, webhook_secret: webhookSecret }),
      });
      await changed(user.id);
    },

    /** Distinct models of enabled channels in the groups this user may use. */
    async models(user: User): Promise<string[]> {
      const groups = Object.keys(groupsFor(user.group));
      if (groups.length === 0) return [];
      const rows = await deps.db
        .selectDistinct({ model: abilities.model })
        .from(abilities)
        .where(and(eq(abilities.enabled, true), inArray(abilities.group, groups)))
        .orderBy(abilities.model);
      return rows.map((row) => row.model);
    },
  };
}

import type {
  TwoFactorSetup,
  TwoFactorStats,
  TwoFactorStatus,
  UserSecondFactors,
} from '@turnpike/core/contracts/two-factor';
import {
  passkeyCredentials,
  type TwoFa,
  twoFaBackupCodes,
  twoFas,
  users,
} from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { isAdmin, type RoleHolder, UserStatus, whyCannotManage } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { hashBackupCode, newBackupCodes } from '@turnpike/core/second-factors/backup-codes';
import { createSecondFactorKeys } from '@turnpike/core/second-factors/factor-box';
import { newTotpSecret, totpUri } from '@turnpike/core/second-factors/totp';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { createCodeCheck } from './code-check.ts';
import { endSessionsOnFactorChange } from './factor-change.ts';

const NOT_ENABLED = 'two-factor sign-in is not on for this account';
const SIGN_IN_AGAIN = 'the sign-in has expired; enter your password again';

/**
 * Two-factor sign-in with an authenticator app (TOTP) and backup codes (docs/adr/0044): enrolment, the second step
 * of a password sign-in, turning it off, new backup codes, and an administrator's reset. Every change of a factor
 * ends the user's sessions; the routes keep the caller's own where the user made the change.
 */
export function createTwoFactorService(deps: AppDeps) {
  const { db } = deps;
  const keys = createSecondFactorKeys(deps.config.cryptoSecret);
  const codes = createCodeCheck(deps, keys);
  const userRepo = createUserRepo(db);

  async function factorOf(userId: number): Promise<TwoFa | undefined> {
    const [row] = await db.select().from(twoFas).where(eq(twoFas.userId, userId));
    return row;
  }

  async function enabledFactorOf(userId: number): Promise<TwoFa> {
    const factor = await factorOf(userId);
    if (!factor?.isEnabled) throw new AppError('BAD_REQUEST', NOT_ENABLED);
    return factor;
  }

  const hashAll = (userId: number, plain: string[]) => {
    const createdAt = nowSeconds();
    return plain.map((code) => ({ userId, codeHash: hashBackupCode(keys.backupCodeKey, code), createdAt }));
  };

  /** The user a password step named, while it is current: same session generation, account enabled. */
  async function userOfFlow(flow: { uid: number; gen: number }): Promise<User> {
    const user = await userRepo.findById(flow.uid);
    if (!user || user.sessionGeneration !== flow.gen) throw new AppError('UNAUTHENTICATED', SIGN_IN_AGAIN);
    if (user.status !== UserStatus.Enabled)
      throw new AppError('USER_DISABLED', 'this user has been disabled');
    return user;
  }

  /** Whether the option requires `user` to enrol before anything else. */
  const mustEnrol = (user: Pick<User, 'role'>, enabled: boolean) =>
    !enabled && isAdmin(user.role) && deps.options.get('AdminTwoFactorRequired');

  return {
    /** Whether a password sign-in of this user needs a second step. */
    async isEnabled(userId: number): Promise<boolean> {
      return (await factorOf(userId))?.isEnabled ?? false;
    },

    mustEnrol,
    userOfFlow,

    async status(user: User): Promise<TwoFactorStatus> {
      const factor = await factorOf(user.id);
      const enabled = factor?.isEnabled ?? false;
      const status: TwoFactorStatus = {
        enabled,
        locked: factor ? codes.isLocked(factor) : false,
        enrolment_required: mustEnrol(user, enabled),
      };
      if (factor && status.locked) status.locked_until = factor.lockedUntil;
      if (enabled) status.backup_codes_remaining = await codes.remainingBackupCodes(user.id);
      return status;
    },

    /**
     * Begins enrolment: a new secret and backup codes, shown this once, kept (sealed, hashed) but guarding nothing
     * until `enable` sees a code made from the secret. An unfinished enrolment is replaced.
     */
    async setup(user: User): Promise<TwoFactorSetup> {
      const held = await factorOf(user.id);
      if (held?.isEnabled)
        throw new AppError(
          'CONFLICT',
          'two-factor sign-in is already on; turn it off before setting it up again',
        );
      const secret = newTotpSecret();
      const backup = newBackupCodes();
      await db.transaction(async (tx) => {
        await tx.delete(twoFas).where(eq(twoFas.userId, user.id));
        await tx.delete(twoFaBackupCodes).where(eq(twoFaBackupCodes.userId, user.id));
        await tx
          .insert(twoFas)
          .values({ userId: user.id, secret: keys.sealSecret(secret), createdAt: nowSeconds() });
        await tx.insert(twoFaBackupCodes).values(hashAll(user.id, backup));
      });
      return {
        secret,
        qr_code_data: totpUri(secret, { issuer: deps.options.get('SystemName'), name: user.username }),
        backup_codes: backup,
      };
    },

    /** Turns it on with a code of the new secret; answers the user's new session generation. */
    async enable(user: User, code: string, ip: string): Promise<number> {
      const factor = await factorOf(user.id);
      if (!factor) throw new AppError('BAD_REQUEST', 'set up two-factor sign-in first');
      if (factor.isEnabled) throw new AppError('CONFLICT', 'two-factor sign-in is already on');
      await codes.check(factor, code, ip, { totp: true, backup: false });
      return db.transaction(async (tx) => {
        await tx.update(twoFas).set({ isEnabled: true }).where(eq(twoFas.id, factor.id));
        return endSessionsOnFactorChange(tx, user.id);
      });
    },

    /** Turns it off with a code or a backup code; answers the new session generation. */
    async disable(user: User, code: string, ip: string): Promise<number> {
      const factor = await enabledFactorOf(user.id);
      await codes.check(factor, code, ip, { totp: true, backup: true });
      return db.transaction(async (tx) => {
        await tx.delete(twoFas).where(eq(twoFas.userId, user.id));
        await tx.delete(twoFaBackupCodes).where(eq(twoFaBackupCodes.userId, user.id));
        return endSessionsOnFactorChange(tx, user.id);
      });
    },

    /** New backup codes for a code of the app (as new-api: not a backup code); the old ones stop working. */
    async regenerateBackupCodes(user: User, code: string, ip: string) {
      const factor = await enabledFactorOf(user.id);
      await codes.check(factor, code, ip, { totp: true, backup: false });
      const backup = newBackupCodes();
      const generation = await db.transaction(async (tx) => {
        await tx.delete(twoFaBackupCodes).where(eq(twoFaBackupCodes.userId, user.id));
        await tx.insert(twoFaBackupCodes).values(hashAll(user.id, backup));
        return endSessionsOnFactorChange(tx, user.id);
      });
      return { backupCodes: backup, generation };
    },

    /**
     * The second step of a password sign-in: the user the password step named, while that step is still current
     * (same session generation, account enabled), once `code` is accepted.
     */
    async completeSignIn(flow: { uid: number; gen: number }, code: string, ip: string): Promise<User> {
      const user = await userOfFlow(flow);
      const factor = await enabledFactorOf(user.id);
      await codes.check(factor, code, ip, { totp: true, backup: true });
      return user;
    },

    /**
     * Removes a user's second factors for an administrator (a lost phone): the TOTP factor and its backup codes,
     * and with `passkeys` the passkeys too. Ends the user's sessions. Answers what was removed.
     */
    async resetSecondFactors(
      actor: RoleHolder,
      targetId: number,
      what: { totp: boolean; passkeys: boolean },
    ): Promise<UserSecondFactors> {
      const target = await userRepo.findById(targetId);
      if (!target) throw new AppError('NOT_FOUND', 'no such user');
      const refusal = whyCannotManage(actor, target, 'edit');
      if (refusal) throw new AppError('FORBIDDEN', refusal);
      return db.transaction(async (tx) => {
        const totp = what.totp
          ? (await tx.delete(twoFas).where(eq(twoFas.userId, targetId)).returning({ on: twoFas.isEnabled }))
              .length > 0
          : false;
        if (what.totp) await tx.delete(twoFaBackupCodes).where(eq(twoFaBackupCodes.userId, targetId));
        const passkeys = what.passkeys
          ? (
              await tx
                .delete(passkeyCredentials)
                .where(eq(passkeyCredentials.userId, targetId))
                .returning({ id: passkeyCredentials.id })
            ).length
          : 0;
        if (totp || passkeys > 0) await endSessionsOnFactorChange(tx, targetId);
        return { totp, passkeys };
      });
    },

    /** What second factors a user has, for an administrator allowed to edit them. */
    async secondFactorsOf(actor: RoleHolder, targetId: number): Promise<UserSecondFactors> {
      const target = await userRepo.findById(targetId);
      if (!target) throw new AppError('NOT_FOUND', 'no such user');
      const refusal = whyCannotManage(actor, target, 'edit');
      if (refusal) throw new AppError('FORBIDDEN', refusal);
      const [row] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(passkeyCredentials)
        .where(eq(passkeyCredentials.userId, targetId));
      return { totp: (await factorOf(targetId))?.isEnabled ?? false, passkeys: row?.n ?? 0 };
    },

    async stats(): Promise<TwoFactorStats> {
      const [all] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(users)
        .where(isNull(users.deletedAt));
      const [on] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(twoFas)
        .where(and(eq(twoFas.isEnabled, true)));
      const total = all?.n ?? 0;
      const enabled = on?.n ?? 0;
      return {
        total_users: total,
        enabled_users: enabled,
        enabled_rate: `${(total > 0 ? (enabled / total) * 100 : 0).toFixed(1)}%`,
      };
    },
  };
}
export type TwoFactorService = ReturnType<typeof createTwoFactorService>;

import type { Login, Register } from '@turnpike/core/contracts/users';
import { burnPasswordCheck, hashPassword, verifyPassword } from '@turnpike/core/crypto/password';
import { randomString } from '@turnpike/core/crypto/random';
import { users } from '@turnpike/core/db/schema/index';
import type { NewUser, User } from '@turnpike/core/db/schema/users';
import { Role, UserStatus } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { eq, sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { formatQuota } from '../../http/quota-text.ts';
import { createVerificationCodes } from '../verification/verification-codes.ts';

const WRONG_CREDENTIALS = 'wrong username or password, or the user is disabled';

export function createAuthService(deps: AppDeps) {
  const repo = createUserRepo(deps.db);
  const codes = createVerificationCodes(deps.kv);

  /** A fresh invite code not used by anyone yet. */
  async function newAffCode(): Promise<string> {
    for (;;) {
      const code = randomString(4);
      if (!(await repo.findByAffCode(code))) return code;
    }
  }

  /**
   * Creates a regular user with the new-user bonus, and the invite bonuses when `affCode` names an inviter, all
   * in one transaction. Used by registration with a password and by third-party sign-in.
   */
  async function createUser(
    fields: Pick<NewUser, 'username' | 'password' | 'displayName' | 'email'> & Partial<NewUser>,
    affCode: string | undefined,
  ): Promise<User> {
    const o = deps.options;
    const inviter = affCode ? await repo.findByAffCode(affCode) : undefined;
    const newUserQuota = o.get('QuotaForNewUser');
    const inviteeQuota = inviter ? o.get('QuotaForInvitee') : 0;
    const inviterQuota = inviter ? o.get('QuotaForInviter') : 0;
    const quotaPerUnit = o.get('QuotaPerUnit');
    const ownAffCode = await newAffCode();

    return deps.db.transaction(async (tx) => {
      const txUsers = createUserRepo(tx);
      const txLogs = createLogRepo(tx);
      const user = await txUsers.insert({
        ...fields,
        role: Role.User,
        quota: newUserQuota + inviteeQuota,
        inviterId: inviter?.id ?? 0,
        affCode: ownAffCode,
        createdTime: nowSeconds(),
      });
      if (newUserQuota > 0) {
        await txLogs.system(
          user.id,
          user.username,
          `new user bonus: ${formatQuota(newUserQuota, quotaPerUnit)}`,
        );
      }
      if (inviter && inviteeQuota > 0) {
        await txLogs.system(
          user.id,
          user.username,
          `invitation bonus: ${formatQuota(inviteeQuota, quotaPerUnit)}`,
        );
      }
      if (inviter) {
        await tx
          .update(users)
          .set({
            affCount: sql`${users.affCount} + 1`,
            affQuota: sql`${users.affQuota} + ${inviterQuota}`,
            affHistoryQuota: sql`${users.affHistoryQuota} + ${inviterQuota}`,
          })
          .where(eq(users.id, inviter.id));
        if (inviterQuota > 0) {
          await txLogs.system(
            inviter.id,
            inviter.username,
            `invited ${user.username}: ${formatQuota(inviterQuota, quotaPerUnit)} of invite earnings`,
          );
        }
      }
      return user;
    });
  }

  return {
    newAffCode,

    /** Same answer for an unknown user and a wrong password, and the same time spent on both. */
    async login(input: Login): Promise<User> {
      if (!deps.options.get('PasswordLoginEnabled')) {
        throw new AppError('FEATURE_DISABLED', 'password sign-in is turned off by the administrator');
      }
      const user = await repo.findByLogin(input.username);
      const valid = user
        ? await verifyPassword(input.password, user.password)
        : await burnPasswordCheck(input.password);
      if (!user || !valid) throw new AppError('INVALID_CREDENTIALS', WRONG_CREDENTIALS);
      if (user.status !== UserStatus.Enabled) throw new AppError('USER_DISABLED', WRONG_CREDENTIALS);
      return user;
    },

    /** Creates a regular user with the new-user and invite bonuses, all in one transaction. */
    async register(input: Register): Promise<User> {
      const o = deps.options;
      if (!o.get('RegisterEnabled')) throw new AppError('FEATURE_DISABLED', 'new registrations are closed');
      if (!o.get('PasswordRegisterEnabled')) {
        throw new AppError(
          'FEATURE_DISABLED',
          'registration with a password is turned off; use a third-party sign-in',
        );
      }
      const email = input.email.trim();
      const verifying = o.get('EmailVerificationEnabled');
      if (verifying && (!email || !input.verification_code)) {
        throw new AppError('VALIDATION_FAILED', 'an email address and its verification code are required');
      }
      if (await repo.isUsernameTaken(input.username))
        throw new AppError('CONFLICT', 'this username is already taken');
      if (email && (await repo.isEmailTaken(email)))
        throw new AppError('CONFLICT', 'this email address is already in use');
      // Last check before writing, so a taken username does not burn the code.
      if (verifying && !(await codes.consume('email', email, input.verification_code))) {
        throw new AppError('VALIDATION_FAILED', 'the verification code is wrong or has expired');
      }

      const passwordHash = await hashPassword(input.password);
      return createUser(
        { username: input.username, password: passwordHash, displayName: input.username, email },
        input.aff_code,
      );
    },

    createUser,
  };
}

import { PASSWORD_MAX, PASSWORD_MIN, type SetupInput, USERNAME_MAX } from '@turnpike/core/contracts/users';
import { hashPassword } from '@turnpike/core/crypto/password';
import { randomString } from '@turnpike/core/crypto/random';
import { setups } from '@turnpike/core/db/schema/index';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

export function createSetupService(deps: AppDeps) {
  const users = createUserRepo(deps.db);

  async function isSetUp(): Promise<boolean> {
    const [row] = await deps.db.select({ id: setups.id }).from(setups).limit(1);
    return row !== undefined;
  }

  return {
    isSetUp,

    async status() {
      const [done, rootInit] = await Promise.all([isSetUp(), users.hasRoot()]);
      return { status: done, root_init: rootInit, database_type: deps.dbKind };
    },

    /** First run: creates the root account (unless one exists) and records the usage mode, exactly once. */
    async complete(input: SetupInput): Promise<void> {
      const passwordHash = input.password ? await hashPassword(input.password) : '';
      await deps.db.transaction(async (tx) => {
        // Serialises concurrent setup calls; the second one then sees the row the first wrote.
        await tx.execute(sql`lock table ${setups} in exclusive mode`);
        const [done] = await tx.select({ id: setups.id }).from(setups).limit(1);
        if (done) throw new AppError('ALREADY_SET_UP', 'the system is already set up');
        const txUsers = createUserRepo(tx);
        if (!(await txUsers.hasRoot())) {
          const username = input.username.trim();
          if (!username) throw new AppError('VALIDATION_FAILED', 'please enter the admin username');
          if (username.length > USERNAME_MAX) {
            throw new AppError('VALIDATION_FAILED', `username must be at most ${USERNAME_MAX} characters`);
          }
          if (input.password.length < PASSWORD_MIN) {
            throw new AppError(
              'VALIDATION_FAILED',
              `password must be at least ${PASSWORD_MIN} characters long`,
            );
          }
          if (input.password.length > PASSWORD_MAX) {
            throw new AppError(
              'VALIDATION_FAILED',
              `password must be at most ${PASSWORD_MAX} characters long`,
            );
          }
          if (input.password !== input.confirmPassword) {
            throw new AppError('VALIDATION_FAILED', 'the two passwords entered do not match');
          }
          await txUsers.insert({
            username,
            password: passwordHash,
            displayName: 'Root User',
            role: Role.Root,
            affCode: randomString(4),
            createdTime: nowSeconds(),
          });
        }
        await tx.insert(setups).values({ version: deps.version, initializedAt: nowSeconds() });
      });
      await deps.options.setMany([
        ['SelfUseModeEnabled', String(input.SelfUseModeEnabled)],
        ['DemoSiteEnabled', String(input.DemoSiteEnabled)],
      ]);
    },
  };
}
export type SetupService = ReturnType<typeof createSetupService>;

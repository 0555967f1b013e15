/**
 * Checking a code against a user's TOTP factor, with the limits that keep guessing useless (docs/adr/0044):
 * - each attempt is counted on the factor's row before its code is looked at, so requests sent in parallel cannot
 *   slip past the limit; every fifth wrong code locks the factor, for 5 minutes, then 10, 20, ... up to a day;
 * - wrong codes are counted per client address too, across users, in the shared KV store;
 * - a right TOTP code is accepted only for a time step later than the last one used, and a backup code only while
 *   unused, each in one conditional update: a code works once, whichever process sees it first.
 */
import { type TwoFa, twoFaBackupCodes, twoFas } from '@turnpike/core/db/schema/index';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { matchBackupCode } from '@turnpike/core/second-factors/backup-codes';
import type { SecondFactorKeys } from '@turnpike/core/second-factors/factor-box';
import { matchTotpStep } from '@turnpike/core/second-factors/totp';
import { and, eq, lt, lte, sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** Wrong codes between locks. */
export const ATTEMPTS_PER_LOCK = 5;
const FIRST_LOCK_SECONDS = 300;
const LONGEST_LOCK_SECONDS = 86_400;
/** Wrong codes one client address may send in `ADDRESS_WINDOW_SECONDS`, whichever users they were for. */
export const ADDRESS_FAILURES_MAX = 20;
const ADDRESS_WINDOW_SECONDS = 900;

export const WRONG_CODE = 'the code is wrong or has expired';
const REUSED_CODE = 'this code has already been used; wait for the next one';

export type CodeKinds = { totp: true; backup: boolean };

export function createCodeCheck(deps: AppDeps, keys: SecondFactorKeys) {
  const { db, kv } = deps;
  const addressKey = (ip: string) => `2fa-wrong:${ip}`;

  const lockedMessage = (until: number) => {
    const minutes = Math.max(1, Math.ceil((until - nowSeconds()) / 60));
    return `too many wrong codes; try again in ${minutes} minute${minutes === 1 ? '' : 's'}`;
  };

  /** Counts one attempt on the factor, or refuses when it is locked. */
  async function claimAttempt(factor: TwoFa): Promise<void> {
    const now = nowSeconds();
    const next = sql`${twoFas.failedAttempts} + 1`;
    const every = sql.raw(String(ATTEMPTS_PER_LOCK));
    const lock = sql`least(${sql.raw(String(LONGEST_LOCK_SECONDS))}, ${sql.raw(String(FIRST_LOCK_SECONDS))} * power(2, (${next}) / ${every} - 1))::bigint`;
    const [claimed] = await db
      .update(twoFas)
      .set({
        failedAttempts: next,
        lockedUntil: sql`case when (${next}) % ${every} = 0 then ${sql.raw(String(now))} + ${lock} else ${twoFas.lockedUntil} end`,
      })
      .where(and(eq(twoFas.id, factor.id), lte(twoFas.lockedUntil, now)))
      .returning({ id: twoFas.id });
    if (claimed) return;
    const [row] = await db
      .select({ lockedUntil: twoFas.lockedUntil })
      .from(twoFas)
      .where(eq(twoFas.id, factor.id));
    throw new AppError('RATE_LIMITED', lockedMessage(row?.lockedUntil ?? now + FIRST_LOCK_SECONDS));
  }

  async function accepted(factor: TwoFa): Promise<void> {
    await db
      .update(twoFas)
      .set({ failedAttempts: 0, lockedUntil: 0, lastUsedAt: nowSeconds() })
      .where(eq(twoFas.id, factor.id));
  }

  async function refuse(ip: string, message: string): Promise<never> {
    await kv.incr(addressKey(ip), ADDRESS_WINDOW_SECONDS).catch(() => 0);
    throw new AppError('INVALID_CREDENTIALS', message);
  }

  /**
   * Accepts `input` once as a TOTP code of `factor` (or, with `kinds.backup`, an unused backup code of its user),
   * or throws: INVALID_CREDENTIALS for a wrong, expired or reused code, RATE_LIMITED while locked.
   */
  async function check(
    factor: TwoFa,
    input: string,
    ip: string,
    kinds: CodeKinds,
  ): Promise<'totp' | 'backup'> {
    const failures = Number((await kv.get(addressKey(ip)).catch(() => undefined)) ?? 0);
    if (failures >= ADDRESS_FAILURES_MAX)
      throw new AppError('RATE_LIMITED', 'too many wrong codes from this address; try again later');
    await claimAttempt(factor);

    const secret = keys.openSecret(factor.secret);
    if (secret === undefined) {
      // Sealed under another CRYPTO_SECRET: no code can be right, and saying so helps the operator.
      throw new AppError(
        'INTERNAL',
        'the two-factor secret cannot be opened; is CRYPTO_SECRET the one it was sealed with?',
      );
    }
    const step = matchTotpStep(secret, input);
    if (step !== undefined) {
      const [used] = await db
        .update(twoFas)
        .set({ lastUsedStep: step })
        .where(and(eq(twoFas.id, factor.id), lt(twoFas.lastUsedStep, step)))
        .returning({ id: twoFas.id });
      if (!used) return refuse(ip, REUSED_CODE);
      await accepted(factor);
      return 'totp';
    }
    if (kinds.backup) {
      const unused = await db
        .select({ id: twoFaBackupCodes.id, codeHash: twoFaBackupCodes.codeHash })
        .from(twoFaBackupCodes)
        .where(and(eq(twoFaBackupCodes.userId, factor.userId), eq(twoFaBackupCodes.usedAt, 0)));
      const id = await matchBackupCode(keys.backupCodeKey, input, unused);
      if (id !== undefined) {
        const [spent] = await db
          .update(twoFaBackupCodes)
          .set({ usedAt: nowSeconds() })
          .where(and(eq(twoFaBackupCodes.id, id), eq(twoFaBackupCodes.usedAt, 0)))
          .returning({ id: twoFaBackupCodes.id });
        if (!spent) return refuse(ip, REUSED_CODE);
        await accepted(factor);
        return 'backup';
      }
    }
    return refuse(ip, WRONG_CODE);
  }

  return {
    check,
    /** Whether the factor is locked now (the status route). */
    isLocked: (factor: TwoFa) => factor.lockedUntil > nowSeconds(),
    /** Unused backup codes of a user. */
    async remainingBackupCodes(userId: number): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(twoFaBackupCodes)
        .where(and(eq(twoFaBackupCodes.userId, userId), eq(twoFaBackupCodes.usedAt, 0)));
      return row?.n ?? 0;
    },
  };
}

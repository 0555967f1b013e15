import type { Executor } from '@turnpike/core/db/client';
import { passkeyChallenges } from '@turnpike/core/db/schema/index';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { and, eq, gt, lte } from 'drizzle-orm';

/** How long a browser has to answer a challenge (WebAuthn's own timeout is set to the same). */
export const CHALLENGE_TTL_SECONDS = 300;

/** `register` (a signed-in user adds one), `sign-in` (password-less) or `second-step` (after the password). */
export type ChallengePurpose = 'register' | 'sign-in' | 'second-step';

/** Keeps a challenge handed out; expired ones are swept on the way, so the table holds only live ones. */
export async function keepChallenge(
  db: Executor,
  challenge: string,
  purpose: ChallengePurpose,
  userId: number,
): Promise<void> {
  const now = nowSeconds();
  await db.delete(passkeyChallenges).where(lte(passkeyChallenges.expiresAt, now));
  await db
    .insert(passkeyChallenges)
    .values({ challenge, purpose, userId, expiresAt: now + CHALLENGE_TTL_SECONDS });
}

/**
 * True once for a live challenge handed out for this purpose and user: the row is deleted as it is read, so a
 * replayed answer, or the same answer sent twice at once, finds nothing the second time.
 */
export async function spendChallenge(
  db: Executor,
  challenge: string,
  purpose: ChallengePurpose,
  userId: number,
): Promise<boolean> {
  const spent = await db
    .delete(passkeyChallenges)
    .where(
      and(
        eq(passkeyChallenges.challenge, challenge),
        eq(passkeyChallenges.purpose, purpose),
        eq(passkeyChallenges.userId, userId),
        gt(passkeyChallenges.expiresAt, nowSeconds()),
      ),
    )
    .returning({ challenge: passkeyChallenges.challenge });
  return spent.length > 0;
}

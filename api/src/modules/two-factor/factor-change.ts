import type { Executor } from '@turnpike/core/db/client';
import { users } from '@turnpike/core/db/schema/index';
import { eq, sql } from 'drizzle-orm';

/**
 * Ends every session of a user whose second factors changed (one added, removed or reset), in the transaction of
 * the change: the session generation moves, as the users trigger does for a password change (docs/adr/0020).
 * Answers the new generation, so the caller can keep its own session (`renewSession`) where the user made the
 * change themselves.
 */
export async function endSessionsOnFactorChange(tx: Executor, userId: number): Promise<number> {
  const [row] = await tx
    .update(users)
    .set({ sessionGeneration: sql`${users.sessionGeneration} + 1`, endedSessions: [] })
    .where(eq(users.id, userId))
    .returning({ sessionGeneration: users.sessionGeneration });
  return row?.sessionGeneration ?? 0;
}

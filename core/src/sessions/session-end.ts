/**
 * Ending console sessions (docs/adr/0020). A session cookie names the user, its own id (`sid`) and the user's
 * session generation it was issued under (`gen`). It is live while the user's row still has that generation and
 * does not list its id among the sessions ended by sign-out. Both live in the user row every console call (and the
 * playground) already reads, so checking costs no read of its own, and every process sharing the database agrees.
 *
 * - Sign-out ends one session: its id is recorded in the row until the cookie's own expiry.
 * - A changed password, role or status, or a deletion, moves the generation (a trigger in the database), which ends
 *   every session of the user; the caller re-issues its own cookie where the change should not sign it out.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { type EndedSession, type User, users } from '../db/schema/users.ts';
import { SESSION_MAX_AGE_SECONDS, type SessionData } from './session-codec.ts';

/**
 * The most ended sessions kept per user. Past it, a sign-out moves the generation instead, ending the user's
 * other sessions too: a bounded row rather than a list someone can grow by signing in and out.
 */
export const MAX_ENDED_SESSIONS = 32;

/** A new session id: 96 random bits, URL-safe. */
export function newSessionId(): string {
  return randomBytes(12).toString('base64url');
}

/** The parts of a user row that decide whether a session is still live. */
export type SessionHolder = Pick<User, 'sessionGeneration' | 'endedSessions'>;

/**
 * True while `session` (already opened by the codec, so sealed by us and unexpired) has not been ended: the user's
 * generation is the one it was issued under and sign-out has not ended its id. `user` is the row of `session.uid`,
 * read on this request. The console API and the relay's playground both call this.
 */
export function isSessionLive(session: SessionData, user: SessionHolder): boolean {
  if ((session.gen ?? 0) !== user.sessionGeneration) return false;
  const sid = session.sid;
  return sid === undefined || !user.endedSessions.some(([ended]) => ended === sid);
}

/**
 * Ends one signed-in session on every process: its id is written to the user's row, kept until the cookie would
 * have expired. A session without an id (issued before ids existed) cannot be told apart from the user's others,
 * so the generation moves and all of them end. A session already ended changes nothing.
 */
export async function endSession(
  db: Db,
  session: SessionData,
  nowSeconds = Date.now() / 1000,
): Promise<void> {
  const uid = session.uid;
  if (!uid) return;
  await db.transaction(async (tx) => {
    const [row] = await tx
      .select({ sessionGeneration: users.sessionGeneration, endedSessions: users.endedSessions })
      .from(users)
      .where(eq(users.id, uid))
      .for('update');
    if (!row || !isSessionLive(session, row)) return;
    const kept: EndedSession[] = row.endedSessions.filter(([, expiresAt]) => expiresAt > nowSeconds);
    if (session.sid === undefined || kept.length >= MAX_ENDED_SESSIONS) {
      await tx
        .update(users)
        .set({ sessionGeneration: row.sessionGeneration + 1, endedSessions: [] })
        .where(eq(users.id, uid));
      return;
    }
    const expiresAt = Math.ceil(session.exp ?? nowSeconds + SESSION_MAX_AGE_SECONDS);
    await tx
      .update(users)
      .set({ endedSessions: [...kept, [session.sid, expiresAt]] })
      .where(eq(users.id, uid));
  });
}

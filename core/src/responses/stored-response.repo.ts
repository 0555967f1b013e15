import { and, eq, gt, lte } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import {
  type NewStoredResponse,
  type StoredResponse,
  storedResponses,
} from '../db/schema/stored-responses.ts';

/** Stored Responses (docs/adr/0051); every read is scoped to the user who made the response and to its lifetime. */
export function createStoredResponseRepo(db: Executor) {
  return {
    /** Writes a batch; an id already kept (a replay of the same write) is left as it is. */
    async insertMany(rows: readonly NewStoredResponse[]): Promise<void> {
      if (rows.length > 0)
        await db
          .insert(storedResponses)
          .values([...rows])
          .onConflictDoNothing();
    },

    /** The user's response by id, while it has not expired. */
    async find(userId: number, id: string, nowSeconds: number): Promise<StoredResponse | undefined> {
      const [row] = await db
        .select()
        .from(storedResponses)
        .where(
          and(
            eq(storedResponses.id, id),
            eq(storedResponses.userId, userId),
            gt(storedResponses.expiresAt, nowSeconds),
          ),
        )
        .limit(1);
      return row;
    },

    /** Deletes the user's response; answers whether there was one. */
    async remove(userId: number, id: string): Promise<boolean> {
      const gone = await db
        .delete(storedResponses)
        .where(and(eq(storedResponses.id, id), eq(storedResponses.userId, userId)))
        .returning({ id: storedResponses.id });
      return gone.length > 0;
    },

    /** Deletes every response whose retention ended by `nowSeconds`; answers how many went. */
    async deleteExpired(nowSeconds: number): Promise<number> {
      const gone = await db
        .delete(storedResponses)
        .where(lte(storedResponses.expiresAt, nowSeconds))
        .returning({ id: storedResponses.id });
      return gone.length;
    },
  };
}

export type StoredResponseRepo = ReturnType<typeof createStoredResponseRepo>;

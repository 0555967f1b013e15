import { desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { contentLogTokens } from '../db/schema/content-log-tokens.ts';
import { type ContentLog, contentLogs, type NewContentLog } from '../db/schema/content-logs.ts';

/** Content logs and the tokens that keep them (docs/adr/0045). */
export function createContentLogRepo(db: Executor) {
  return {
    async insertMany(rows: NewContentLog[]): Promise<void> {
      if (rows.length > 0) await db.insert(contentLogs).values(rows);
    },

    /** The content of a call by its request id (the newest, should a request id ever repeat). */
    async findByRequestId(requestId: string): Promise<ContentLog | undefined> {
      const [row] = await db
        .select()
        .from(contentLogs)
        .where(eq(contentLogs.requestId, requestId))
        .orderBy(desc(contentLogs.id))
        .limit(1);
      return row;
    },

    /** Which of these tokens keep content logs (all of them when `ids` is absent). */
    async tokensOn(ids?: readonly number[]): Promise<number[]> {
      if (ids && ids.length === 0) return [];
      const rows = await db
        .select({ id: contentLogTokens.tokenId })
        .from(contentLogTokens)
        .where(ids ? inArray(contentLogTokens.tokenId, [...ids]) : undefined);
      return rows.map((r) => r.id);
    },

    async setToken(tokenId: number, on: boolean, by: number): Promise<void> {
      if (!on) {
        await db.delete(contentLogTokens).where(eq(contentLogTokens.tokenId, tokenId));
        return;
      }
      await db
        .insert(contentLogTokens)
        .values({ tokenId, enabledBy: by, enabledAt: Math.floor(Date.now() / 1000) })
        .onConflictDoNothing();
    },
  };
}

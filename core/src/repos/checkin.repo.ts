import { and, desc, eq, gte, lte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type Checkin, checkins, type NewCheckin } from '../db/schema/checkins.ts';

/** Daily check-ins: one row per user and day, the unique index deciding who was first. */
export function createCheckinRepo(db: Executor) {
  return {
    /** Inserts the day's row, or nothing when the user already has one for that day. */
    async claim(row: NewCheckin): Promise<Checkin | undefined> {
      const [inserted] = await db.insert(checkins).values(row).onConflictDoNothing().returning();
      return inserted;
    },

    async has(userId: number, date: string): Promise<boolean> {
      const [row] = await db
        .select({ id: checkins.id })
        .from(checkins)
        .where(and(eq(checkins.userId, userId), eq(checkins.checkinDate, date)))
        .limit(1);
      return row !== undefined;
    },

    /** A user's check-ins between two dates (`YYYY-MM-DD`, inclusive), newest first. */
    between(userId: number, from: string, to: string): Promise<Checkin[]> {
      return db
        .select()
        .from(checkins)
        .where(
          and(eq(checkins.userId, userId), gte(checkins.checkinDate, from), lte(checkins.checkinDate, to)),
        )
        .orderBy(desc(checkins.checkinDate));
    },

    async totals(userId: number): Promise<{ count: number; quota: number }> {
      const [row] = await db
        .select({
          count: sql<number>`count(*)`.mapWith(Number),
          quota: sql<number>`coalesce(sum(${checkins.quotaAwarded}), 0)`.mapWith(Number),
        })
        .from(checkins)
        .where(eq(checkins.userId, userId));
      return { count: row?.count ?? 0, quota: row?.quota ?? 0 };
    },
  };
}

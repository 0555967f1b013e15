import { and, desc, eq, ilike, isNull, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type NewRedemption, type Redemption, redemptions } from '../db/schema/index.ts';
import { RedemptionStatus } from '../domain/redemptions.ts';

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const live = (extra?: SQL) => and(isNull(redemptions.deletedAt), extra);

export interface RedemptionPage {
  readonly rows: Redemption[];
  readonly total: number;
}

/** Data access for redemption codes (admin side and redeeming). */
export function createRedemptionRepo(db: Executor) {
  async function page(where: SQL | undefined, pageNo: number, size: number): Promise<RedemptionPage> {
    const [count] = await db
      .select({ total: sql<number>`count(*)`.mapWith(Number) })
      .from(redemptions)
      .where(where);
    const rows = await db
      .select()
      .from(redemptions)
      .where(where)
      .orderBy(desc(redemptions.id))
      .limit(size)
      .offset((pageNo - 1) * size);
    return { rows, total: count?.total ?? 0 };
  }

  return {
    list: (pageNo: number, size: number) => page(live(), pageNo, size),

    /** By id (when the keyword is a number) or by name containing the keyword. */
    search(keyword: string, pageNo: number, size: number): Promise<RedemptionPage> {
      const byName = ilike(redemptions.name, `%${escapeLike(keyword)}%`);
      const where = /^\d{1,9}$/.test(keyword) ? or(eq(redemptions.id, Number(keyword)), byName) : byName;
      return page(live(where), pageNo, size);
    },

    async find(id: number): Promise<Redemption | undefined> {
      const [row] = await db
        .select()
        .from(redemptions)
        .where(live(eq(redemptions.id, id)))
        .limit(1);
      return row;
    },

    async findByKey(key: string): Promise<Redemption | undefined> {
      const [row] = await db
        .select()
        .from(redemptions)
        .where(live(eq(redemptions.key, key)))
        .limit(1);
      return row;
    },

    async insertMany(rows: NewRedemption[]): Promise<Redemption[]> {
      return db.insert(redemptions).values(rows).returning();
    },

    async update(id: number, patch: Partial<NewRedemption>): Promise<Redemption | undefined> {
      const [row] = await db
        .update(redemptions)
        .set(patch)
        .where(live(eq(redemptions.id, id)))
        .returning();
      return row;
    },

    async delete(id: number): Promise<boolean> {
      const gone = await db
        .update(redemptions)
        .set({ deletedAt: new Date() })
        .where(live(eq(redemptions.id, id)))
        .returning({ id: redemptions.id });
      return gone.length > 0;
    },

    /**
     * Marks an unused code used by `userId` in one conditional statement, so of any number of concurrent
     * attempts exactly one gets the row back. Call inside the transaction that credits the quota.
     */
    async claim(key: string, userId: number, now: number): Promise<Redemption | undefined> {
      const [row] = await db
        .update(redemptions)
        .set({ status: RedemptionStatus.Used, usedUserId: userId, redeemedTime: now })
        .where(live(and(eq(redemptions.key, key), eq(redemptions.status, RedemptionStatus.Unused))))
        .returning();
      return row;
    },
  };
}

export type RedemptionRepo = ReturnType<typeof createRedemptionRepo>;

import { and, eq } from 'drizzle-orm';
import { TopUpStatus } from '../contracts/wallet.ts';
import type { Executor } from '../db/client.ts';
import { type NewTopUp, type TopUp, topUps } from '../db/schema/index.ts';

/** Online payment orders. */
export function createTopUpRepo(db: Executor) {
  return {
    async insert(row: NewTopUp): Promise<TopUp> {
      const [created] = await db.insert(topUps).values(row).returning();
      return created!;
    },

    async findByTradeNo(tradeNo: string): Promise<TopUp | undefined> {
      const [row] = await db.select().from(topUps).where(eq(topUps.tradeNo, tradeNo)).limit(1);
      return row;
    },

    /**
     * Moves a pending order to success in one conditional statement: of any number of concurrent or repeated
     * callbacks exactly one gets the row back. Call inside the transaction that credits the quota.
     */
    async complete(tradeNo: string, now: number): Promise<TopUp | undefined> {
      const [row] = await db
        .update(topUps)
        .set({ status: TopUpStatus.Success, completeTime: now })
        .where(and(eq(topUps.tradeNo, tradeNo), eq(topUps.status, TopUpStatus.Pending)))
        .returning();
      return row;
    },
  };
}

export type TopUpRepo = ReturnType<typeof createTopUpRepo>;

/**
 * Balance changes of one request, applied in SQL so quota can never go below zero whatever number of relay
 * processes serve the same user (reference §5.3–5.4, docs/adr/0006):
 * - the reservation is one conditional update per row (`quota = quota - n where quota >= n`), user and token in
 *   one transaction, so twenty concurrent requests on a small balance cannot all pass the check;
 * - the settlement refunds the unused part, or takes the extra under row locks capped by what is left
 *   (`settleReservation`), so a bill larger than the balance leaves zero, never a negative number.
 * These two writes are immediate (they decide whether the next request may run); counters and logs go through
 * the batching writer.
 */
import { settleReservation } from '@turnpike/core/billing/settle';
import type { Db } from '@turnpike/core/db/client';
import { tokens, users } from '@turnpike/core/db/schema/index';
import { and, eq, gte, sql } from 'drizzle-orm';

/** Who pays: the user always, and the token when its quota is limited. */
export interface Payer {
  readonly userId: number;
  readonly tokenId: number;
  readonly tokenUnlimited: boolean;
}

export type ReserveResult =
  | { ok: true; userQuota: number; tokenQuota: number | undefined }
  | { ok: false; code: 'insufficient_user_quota' | 'pre_consume_token_quota_failed' };

class ReserveRefused extends Error {
  readonly code: 'insufficient_user_quota' | 'pre_consume_token_quota_failed';
  constructor(code: 'insufficient_user_quota' | 'pre_consume_token_quota_failed') {
    super(code);
    this.code = code;
  }
}

export async function reserveQuota(db: Db, payer: Payer, amount: number): Promise<ReserveResult> {
  try {
    return await db.transaction(async (tx) => {
      const [user] = await tx
        .update(users)
        .set({ quota: sql`${users.quota} - ${amount}` })
        .where(and(eq(users.id, payer.userId), gte(users.quota, amount)))
        .returning({ quota: users.quota });
      if (!user) throw new ReserveRefused('insufficient_user_quota');
      let tokenQuota: number | undefined;
      if (!payer.tokenUnlimited) {
        const [token] = await tx
          .update(tokens)
          .set({ remainQuota: sql`${tokens.remainQuota} - ${amount}` })
          .where(and(eq(tokens.id, payer.tokenId), gte(tokens.remainQuota, amount)))
          .returning({ remainQuota: tokens.remainQuota });
        if (!token) throw new ReserveRefused('pre_consume_token_quota_failed');
        tokenQuota = token.remainQuota;
      }
      return { ok: true as const, userQuota: user.quota, tokenQuota };
    });
  } catch (error) {
    if (error instanceof ReserveRefused) return { ok: false, code: error.code };
    throw error;
  }
}

export interface SettleResult {
  /** Quota actually taken for the request (≤ the bill). */
  readonly charged: number;
  /** Part of the bill the balance could not cover. */
  readonly shortfall: number;
  readonly userQuota: number | undefined;
  readonly tokenQuota: number | undefined;
}

/**
 * Turns a reservation into the final charge: refunds `reserved − quota` when the bill is smaller (no lock
 * needed: adding is always safe), else takes `quota − reserved` more, capped by the balances left.
 */
export async function settleQuota(
  db: Db,
  payer: Payer,
  reserved: number,
  quota: number,
): Promise<SettleResult> {
  if (quota === reserved)
    return { charged: quota, shortfall: 0, userQuota: undefined, tokenQuota: undefined };
  if (quota < reserved) {
    const refund = reserved - quota;
    return db.transaction(async (tx) => {
      const [user] = await tx
        .update(users)
        .set({ quota: sql`${users.quota} + ${refund}` })
        .where(eq(users.id, payer.userId))
        .returning({ quota: users.quota });
      let tokenQuota: number | undefined;
      if (!payer.tokenUnlimited) {
        const [token] = await tx
          .update(tokens)
          .set({ remainQuota: sql`${tokens.remainQuota} + ${refund}` })
          .where(eq(tokens.id, payer.tokenId))
          .returning({ remainQuota: tokens.remainQuota });
        tokenQuota = token?.remainQuota;
      }
      return { charged: quota, shortfall: 0, userQuota: user?.quota, tokenQuota };
    });
  }
  return db.transaction(async (tx) => {
    const [user] = await tx
      .select({ quota: users.quota })
      .from(users)
      .where(eq(users.id, payer.userId))
      .for('update');
    let available = Math.max(user?.quota ?? 0, 0);
    if (!payer.tokenUnlimited) {
      const [token] = await tx
        .select({ remainQuota: tokens.remainQuota })
        .from(tokens)
        .where(eq(tokens.id, payer.tokenId))
        .for('update');
      available = Math.min(available, Math.max(token?.remainQuota ?? 0, 0));
    }
    const change = settleReservation(quota, reserved, available);
    let userQuota: number | undefined;
    let tokenQuota: number | undefined;
    if (change.delta !== 0) {
      const [u] = await tx
        .update(users)
        .set({ quota: sql`${users.quota} - ${change.delta}` })
        .where(eq(users.id, payer.userId))
        .returning({ quota: users.quota });
      userQuota = u?.quota;
      if (!payer.tokenUnlimited) {
        const [t] = await tx
          .update(tokens)
          .set({ remainQuota: sql`${tokens.remainQuota} - ${change.delta}` })
          .where(eq(tokens.id, payer.tokenId))
          .returning({ remainQuota: tokens.remainQuota });
        tokenQuota = t?.remainQuota;
      }
    }
    return { charged: change.charged, shortfall: change.shortfall, userQuota, tokenQuota };
  });
}

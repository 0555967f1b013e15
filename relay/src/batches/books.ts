/**
 * A batch's money (docs/adr/0050), in two transactions:
 * - **accept**: the estimate, first held on the ledger (so a batch cannot take what calls in flight hold), is taken
 *   from the balance in the transaction that stores the batch row (`held`): the row and the debit exist together or
 *   not at all, whatever process dies when. The ledger then forgets the payer's bases (they are read again with the
 *   debit) before the hold is released.
 * - **settle**: once the lines' outcomes are known, one transaction locks the row while `settled_at` is 0, writes a
 *   consume log per served line (each line's bill, their sum capped at `held`), adds the sum to the used quota of
 *   the user, token and channel, gives `held − charged` back, and sets `settled_at`. A second settle of the same
 *   batch, from this relay or another after a restart, finds `settled_at` set and does nothing.
 * So the balance drops by exactly the sum of the lines' consume logs, once.
 */
import { type Hold, tokenAccount, userAccount } from '@turnpike/core/billing/ledger';
import type { Db, Executor } from '@turnpike/core/db/client';
import {
  type Batch,
  batches,
  channels,
  logs,
  type NewBatch,
  type NewLog,
  tokens,
  users,
} from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import type { EventBus } from '@turnpike/core/events/bus';
import { and, eq, sql } from 'drizzle-orm';
import type { RelayContext } from '../pipeline/context.ts';

/** Who pays for a held job, and how much was held. */
export interface HeldOwner {
  readonly userId: number;
  readonly tokenId: number;
  /** 1 when the paying token's own quota is limited (it is debited and refunded too). */
  readonly tokenLimited: number;
  readonly held: number;
}

/**
 * Takes `owner.held` from the balance in the transaction that writes the job's row (`insert`); the ledger's hold is
 * released after, the payer's bases read again first so the debit is never missed.
 */
export async function takeHeld<T>(
  ctx: RelayContext,
  hold: Hold,
  owner: HeldOwner,
  insert: (tx: Executor) => Promise<T>,
): Promise<T> {
  const { db, bus } = ctx.deps;
  const limited = owner.tokenLimited === 1;
  let stored: T | undefined;
  try {
    stored = await db.transaction(async (tx) => {
      const inserted = await insert(tx);
      if (owner.held > 0) {
        await tx
          .update(users)
          .set({ quota: sql`${users.quota} - ${owner.held}`, ledgerVersion: sql`${users.ledgerVersion} + 1` })
          .where(eq(users.id, owner.userId));
        if (limited)
          await tx
            .update(tokens)
            .set({
              remainQuota: sql`${tokens.remainQuota} - ${owner.held}`,
              ledgerVersion: sql`${tokens.ledgerVersion} + 1`,
            })
            .where(eq(tokens.id, owner.tokenId));
      }
      return inserted;
    });
  } finally {
    if (stored !== undefined && owner.held > 0)
      ctx.ledger.invalidate(
        limited ? [userAccount(owner.userId), tokenAccount(owner.tokenId)] : [userAccount(owner.userId)],
      );
    await ctx.ledger.settle(hold, 0, false);
  }
  if (stored === undefined) throw new Error('the held job was not written');
  if (owner.held > 0) await publishChanged(bus, owner.userId, limited ? owner.tokenId : undefined);
  return stored;
}

/** Takes the held estimate from the balance with the batch row. */
export async function acceptBatch(ctx: RelayContext, hold: Hold, row: NewBatch): Promise<Batch> {
  const owner = {
    userId: row.userId,
    tokenId: row.tokenId,
    tokenLimited: row.tokenLimited ?? 0,
    held: row.held,
  };
  return takeHeld(ctx, hold, owner, async (tx) => {
    const [inserted] = await tx.insert(batches).values(row).returning();
    if (!inserted) throw new Error('the batch row was not written');
    return inserted;
  });
}

/**
 * In the settling transaction: gives `refunded` back to the owner, counts `charged` in the used quota of the user,
 * token and channel, and `requests` in the user's request count.
 */
export async function giveBackRest(
  tx: Executor,
  owner: Omit<HeldOwner, 'held'> & { readonly channelId: number },
  amounts: { readonly charged: number; readonly refunded: number; readonly requests: number },
): Promise<void> {
  const { charged, refunded, requests } = amounts;
  await tx
    .update(users)
    .set({
      quota: sql`${users.quota} + ${refunded}`,
      usedQuota: sql`${users.usedQuota} + ${charged}`,
      requestCount: sql`${users.requestCount} + ${requests}`,
    })
    .where(eq(users.id, owner.userId));
  await tx
    .update(tokens)
    .set({
      usedQuota: sql`${tokens.usedQuota} + ${charged}`,
      ...(owner.tokenLimited === 1 ? { remainQuota: sql`${tokens.remainQuota} + ${refunded}` } : {}),
    })
    .where(eq(tokens.id, owner.tokenId));
  if (charged > 0)
    await tx
      .update(channels)
      .set({ usedQuota: sql`${channels.usedQuota} + ${charged}` })
      .where(eq(channels.id, owner.channelId));
}

/** One line's outcome as billed. */
export interface LineCharge {
  readonly customId: string;
  readonly quota: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens?: number;
}

/** The batch's end state, stored with the settlement. */
export interface BatchEnd {
  readonly status: 'completed' | 'failed' | 'expired' | 'cancelled';
  readonly completed: number;
  readonly failed: number;
  readonly outputFileId?: string | undefined;
  readonly errorFileId?: string | undefined;
  readonly errors?: unknown;
  /** Unix seconds. */
  readonly now: number;
}

export interface Settled {
  readonly charged: number;
  readonly refunded: number;
}

const LOGS_PER_INSERT = 500;

/**
 * Bills the served lines, gives the rest of the hold back and stores the end state, exactly once; undefined when
 * the batch was settled before (by another process, or an earlier pass).
 */
export async function settleBatch(
  db: Db,
  bus: EventBus,
  id: string,
  lines: readonly LineCharge[],
  end: BatchEnd,
  describe: (line: LineCharge, batch: Batch) => Pick<NewLog, 'content' | 'other'>,
): Promise<Settled | undefined> {
  const result = await db.transaction(async (tx) => {
    const [batch] = await tx
      .select()
      .from(batches)
      .where(and(eq(batches.id, id), eq(batches.settledAt, 0)))
      .for('update');
    if (!batch) return undefined;
    let left = batch.held;
    const rows: NewLog[] = [];
    for (const line of lines) {
      const quota = Math.min(Math.max(0, line.quota), left);
      left -= quota;
      rows.push({
        userId: batch.userId,
        createdAt: end.now,
        type: LogType.Consume,
        username: batch.username,
        tokenName: batch.tokenName,
        modelName: batch.model,
        quota,
        promptTokens: line.promptTokens,
        completionTokens: line.completionTokens,
        useTime: 0,
        isStream: false,
        channelId: batch.channelId,
        tokenId: batch.tokenId,
        group: batch.group,
        requestId: batch.id,
        ...describe({ ...line, quota }, batch),
      });
    }
    const charged = batch.held - left;
    for (let start = 0; start < rows.length; start += LOGS_PER_INSERT)
      await tx.insert(logs).values(rows.slice(start, start + LOGS_PER_INSERT));
    const refunded = left;
    await giveBackRest(tx, batch, { charged, refunded, requests: rows.length });
    await tx
      .update(batches)
      .set({
        settledAt: end.now,
        charged,
        status: end.status,
        completed: end.completed,
        failed: end.failed,
        outputFileId: end.outputFileId ?? null,
        errorFileId: end.errorFileId ?? null,
        ...(end.errors === undefined ? {} : { errors: end.errors }),
        ...endTimeOf(end.status, end.now),
      })
      .where(eq(batches.id, id));
    return {
      charged,
      refunded,
      userId: batch.userId,
      tokenId: batch.tokenLimited === 1 ? batch.tokenId : undefined,
    };
  });
  if (!result) return undefined;
  await publishChanged(bus, result.userId, result.tokenId);
  return { charged: result.charged, refunded: result.refunded };
}

/** The column of the moment a batch reached its end status. */
function endTimeOf(status: BatchEnd['status'], now: number) {
  switch (status) {
    case 'completed':
      return { completedAt: now };
    case 'failed':
      return { failedAt: now };
    case 'expired':
      return { expiredAt: now };
    case 'cancelled':
      return { cancelledAt: now };
  }
}

export async function publishChanged(bus: EventBus, userId: number, tokenId: number | undefined) {
  await bus.publish({ type: 'users.changed', ids: [userId] });
  if (tokenId !== undefined) await bus.publish({ type: 'tokens.changed', ids: [tokenId] });
}

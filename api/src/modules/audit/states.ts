/**
 * How the audit reads the state of what an administrative change touches, before and after it (docs/adr/0045):
 * one reader per kind, inside the change's transaction. Counters that move on their own (used quota, balance,
 * test times) are left out, so a row shows what the administrator changed, not what traffic did meanwhile.
 */
import { channels } from '@turnpike/core/db/schema/channels';
import { contentLogTokens } from '@turnpike/core/db/schema/content-log-tokens';
import { redemptions } from '@turnpike/core/db/schema/redemptions';
import { users } from '@turnpike/core/db/schema/users';
import { isOptionKey } from '@turnpike/core/options/registry';
import { eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** Reads the state of one thing by id; undefined when it does not exist. */
export type StateReader = (deps: AppDeps) => (id: string) => Promise<unknown>;

const asId = (id: string) => (/^\d{1,10}$/.test(id) ? Number(id) : undefined);

/** Drops the fields named from a row. */
function without<T extends Record<string, unknown>>(row: T | undefined, fields: readonly (keyof T)[]) {
  if (!row) return undefined;
  const copy: Record<string, unknown> = { ...row };
  for (const field of fields) delete copy[field as string];
  return copy;
}

export const channelState: StateReader = (deps) => async (id) => {
  const channelId = asId(id);
  if (channelId === undefined) return undefined;
  const [row] = await deps.db.select().from(channels).where(eq(channels.id, channelId)).limit(1);
  return without(row, ['usedQuota', 'balance', 'balanceUpdatedTime', 'responseTime', 'testTime']);
};

export const userState: StateReader = (deps) => async (id) => {
  const userId = asId(id);
  if (userId === undefined) return undefined;
  const [row] = await deps.db.select().from(users).where(eq(users.id, userId)).limit(1);
  return without(row, ['usedQuota', 'requestCount', 'ledgerVersion']);
};

export const redemptionState: StateReader = (deps) => async (id) => {
  const codeId = asId(id);
  if (codeId === undefined) return undefined;
  const [row] = await deps.db.select().from(redemptions).where(eq(redemptions.id, codeId)).limit(1);
  return row;
};

/** An option as served (a price map with the entries resources own laid over it), under its own key. */
export const optionState: StateReader = (deps) => async (key) =>
  isOptionKey(key) ? { [key]: deps.options.get(key) } : undefined;

/** Whether a token keeps content logs. */
export const contentLogSwitchState: StateReader = (deps) => async (id) => {
  const tokenId = asId(id);
  if (tokenId === undefined) return undefined;
  const [row] = await deps.db
    .select({ tokenId: contentLogTokens.tokenId })
    .from(contentLogTokens)
    .where(eq(contentLogTokens.tokenId, tokenId))
    .limit(1);
  return { content_log: row !== undefined };
};

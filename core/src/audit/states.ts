/**
 * The state of what an administrative change touches, as its audit row compares it before and after
 * (docs/adr/0045), read inside the change's transaction. Counters that move on their own (used quota, balance,
 * test times) are left out, so a row shows what was changed, not what traffic did meanwhile.
 */
import { eq } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { channels } from '../db/schema/channels.ts';
import { contentLogTokens } from '../db/schema/content-log-tokens.ts';
import { optionSources } from '../db/schema/option-sources.ts';
import { options } from '../db/schema/options.ts';
import { redemptions } from '../db/schema/redemptions.ts';
import { users } from '../db/schema/users.ts';

/** Reads the state of one thing by id; undefined when it does not exist. */
export type StateOf = (id: string) => Promise<unknown>;

const asId = (id: string) => (/^\d{1,10}$/.test(id) ? Number(id) : undefined);

function without<T extends object>(row: T | undefined, fields: readonly (keyof T)[]) {
  if (!row) return undefined;
  const copy: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const field of fields) delete copy[field as string];
  return copy;
}

export const channelState =
  (db: Executor): StateOf =>
  async (id) => {
    const channelId = asId(id);
    if (channelId === undefined) return undefined;
    const [row] = await db.select().from(channels).where(eq(channels.id, channelId)).limit(1);
    return without(row, ['usedQuota', 'balance', 'balanceUpdatedTime', 'responseTime', 'testTime']);
  };

export const userState =
  (db: Executor): StateOf =>
  async (id) => {
    const userId = asId(id);
    if (userId === undefined) return undefined;
    const [row] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
    return without(row, ['usedQuota', 'requestCount', 'ledgerVersion']);
  };

export const redemptionState =
  (db: Executor): StateOf =>
  async (id) => {
    const codeId = asId(id);
    if (codeId === undefined) return undefined;
    const [row] = await db.select().from(redemptions).where(eq(redemptions.id, codeId)).limit(1);
    return row;
  };

/** Whether a token keeps content logs. */
export const contentLogSwitchState =
  (db: Executor): StateOf =>
  async (id) => {
    const tokenId = asId(id);
    if (tokenId === undefined) return undefined;
    const [row] = await db
      .select({ tokenId: contentLogTokens.tokenId })
      .from(contentLogTokens)
      .where(eq(contentLogTokens.tokenId, tokenId))
      .limit(1);
    return { content_log: row !== undefined };
  };

/**
 * An option as stored, with the entries Kubernetes resources own (docs/adr/0017), under its own key: what the
 * operator changes. (The console API reads the served value from its option cache instead.)
 */
export const storedOptionState =
  (db: Executor): StateOf =>
  async (key) => {
    const [row] = await db
      .select({ value: options.value })
      .from(options)
      .where(eq(options.key, key))
      .limit(1);
    const owned = await db
      .select({ entry: optionSources.entry, value: optionSources.value })
      .from(optionSources)
      .where(eq(optionSources.optionKey, key));
    if (!row && owned.length === 0) return undefined;
    return {
      [key]: {
        stored: row?.value ?? null,
        owned: Object.fromEntries(owned.map((o) => [o.entry, o.value])),
      },
    };
  };

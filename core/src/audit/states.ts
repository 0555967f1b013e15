/**
 * The state of what an administrative change touches, as its audit row compares it before and after
 * (docs/adr/0045), read inside the change's transaction. Counters that move on their own (used quota, balance,
 * test times) are left out, so a row shows what was changed, not what traffic did meanwhile.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type Channel, channels } from '../db/schema/channels.ts';
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

/** A channel row as the audit compares it. */
export const channelStateOf = (row: Channel | undefined) =>
  without(row, ['usedQuota', 'balance', 'balanceUpdatedTime', 'responseTime', 'testTime']);

export const channelState =
  (db: Executor): StateOf =>
  async (id) => {
    const channelId = asId(id);
    if (channelId === undefined) return undefined;
    const [row] = await db.select().from(channels).where(eq(channels.id, channelId)).limit(1);
    return channelStateOf(row);
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

/** What an operator's batch touches: per option key, the entries (`''` for a whole option). */
export type OptionScope = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The options of `keys` as stored, restricted to the entries of `scope` (docs/adr/0017): a price entry's number
 * as its resource owns it, a whole option's stored text. A batch's audit reads what it touches, not every price.
 */
export async function ownedOptionStates(
  db: Executor,
  scope: OptionScope,
  keys: readonly string[],
): Promise<Map<string, unknown>> {
  const states = new Map<string, unknown>();
  const wanted = keys.filter((key) => scope.has(key));
  const entries = [...new Set(wanted.flatMap((key) => [...(scope.get(key) ?? [])]))];
  if (wanted.length === 0 || entries.length === 0) return states;
  const owned = await db
    .select({ key: optionSources.optionKey, entry: optionSources.entry, value: optionSources.value })
    .from(optionSources)
    .where(and(inArray(optionSources.optionKey, wanted), inArray(optionSources.entry, entries)));
  const whole = wanted.filter((key) => scope.get(key)?.has(''));
  const stored =
    whole.length === 0
      ? []
      : await db
          .select({ key: options.key, value: options.value })
          .from(options)
          .where(inArray(options.key, whole));
  const byKey = new Map<string, Record<string, unknown>>();
  const entriesOf = (key: string) => {
    const found = byKey.get(key) ?? {};
    byKey.set(key, found);
    return found;
  };
  for (const row of owned)
    if (scope.get(row.key)?.has(row.entry))
      entriesOf(row.key)[row.entry === '' ? '(owned whole)' : row.entry] =
        row.entry === '' ? true : row.value;
  for (const row of stored) entriesOf(row.key)['(stored)'] = row.value;
  // Under the option's own key, as the console's rows are: a secret option is masked whole by its name.
  for (const [key, entries] of byKey) states.set(key, { [key]: entries });
  return states;
}

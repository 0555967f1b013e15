import { eq, inArray, notInArray, sql } from 'drizzle-orm';
import { type AbilityRow, computeAbilities } from '../channels/channel-rules.ts';
import type { Executor } from '../db/client.ts';
import { abilities, type Channel, channels } from '../db/schema/index.ts';

const CHUNK = 200;

/** The routing index: group × model × channel rows, always rebuilt from the channel rows themselves. */
export function createAbilityRepo(db: Executor) {
  async function insert(rows: AbilityRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) await db.insert(abilities).values(rows.slice(i, i + CHUNK));
  }

  return {
    /** Replaces the rows of these channels with what their current state says. */
    async rebuild(changed: readonly Channel[]): Promise<void> {
      if (changed.length === 0) return;
      await db.delete(abilities).where(
        inArray(
          abilities.channelId,
          changed.map((c) => c.id),
        ),
      );
      await insert(changed.flatMap((c) => computeAbilities(c)));
    },

    async deleteFor(channelIds: number[]): Promise<void> {
      if (channelIds.length > 0) await db.delete(abilities).where(inArray(abilities.channelId, channelIds));
    },

    /** Distinct models with at least one enabled row. */
    async enabledModels(): Promise<string[]> {
      const rows = await db
        .selectDistinct({ model: abilities.model })
        .from(abilities)
        .where(eq(abilities.enabled, true))
        .orderBy(abilities.model);
      return rows.map((r) => r.model);
    },

    /** Drops rows of channels that no longer exist; answers how many went. */
    async deleteOrphans(): Promise<number> {
      const existing = db.select({ id: channels.id }).from(channels);
      const gone = await db
        .delete(abilities)
        .where(notInArray(abilities.channelId, existing))
        .returning({ id: abilities.channelId });
      return gone.length;
    },

    async countFor(channelId: number): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(abilities)
        .where(eq(abilities.channelId, channelId));
      return row?.n ?? 0;
    },
  };
}

export type AbilityRepo = ReturnType<typeof createAbilityRepo>;

import { and, asc, desc, eq, inArray, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type Channel, channels, type NewChannel } from '../db/schema/index.ts';

export interface ChannelPage {
  readonly rows: Channel[];
  readonly total: number;
}

/** Data access for channels; rows carry the sealed key, which callers must never hand out. */
export function createChannelRepo(db: Executor) {
  const order = (idSort: boolean) =>
    idSort ? [desc(channels.id)] : [desc(channels.priority), desc(channels.id)];

  return {
    async page(pageNo: number, size: number, idSort: boolean): Promise<ChannelPage> {
      const [count] = await db.select({ total: sql<number>`count(*)`.mapWith(Number) }).from(channels);
      const rows = await db
        .select()
        .from(channels)
        .orderBy(...order(idSort))
        .limit(size)
        .offset((pageNo - 1) * size);
      return { rows, total: count?.total ?? 0 };
    },

    /** Every channel (admin views that filter or group in memory). */
    all(idSort = true): Promise<Channel[]> {
      return db
        .select()
        .from(channels)
        .orderBy(...order(idSort));
    },

    async find(id: number): Promise<Channel | undefined> {
      const [row] = await db.select().from(channels).where(eq(channels.id, id)).limit(1);
      return row;
    },

    byIds(ids: number[]): Promise<Channel[]> {
      if (ids.length === 0) return Promise.resolve([]);
      return db.select().from(channels).where(inArray(channels.id, ids)).orderBy(asc(channels.id));
    },

    byTag(tag: string): Promise<Channel[]> {
      return db.select().from(channels).where(eq(channels.tag, tag)).orderBy(asc(channels.id));
    },

    insertMany(rows: NewChannel[]): Promise<Channel[]> {
      return db.insert(channels).values(rows).returning();
    },

    async update(id: number, patch: Partial<NewChannel>): Promise<Channel | undefined> {
      const [row] = await db.update(channels).set(patch).where(eq(channels.id, id)).returning();
      return row;
    },

    /** Applies one patch to many channels; answers the changed rows. */
    updateWhere(where: SQL, patch: Partial<NewChannel>): Promise<Channel[]> {
      return db.update(channels).set(patch).where(where).returning();
    },

    /** Answers the ids that went. */
    async deleteByIds(ids: number[]): Promise<number[]> {
      if (ids.length === 0) return [];
      const gone = await db.delete(channels).where(inArray(channels.id, ids)).returning({ id: channels.id });
      return gone.map((g) => g.id);
    },

    async deleteDisabled(): Promise<number[]> {
      const gone = await db
        .delete(channels)
        .where(or(eq(channels.status, 2), eq(channels.status, 3)))
        .returning({ id: channels.id });
      return gone.map((g) => g.id);
    },

    async ids(): Promise<number[]> {
      const rows = await db.select({ id: channels.id }).from(channels);
      return rows.map((r) => r.id);
    },

    whereTag: (tag: string) => eq(channels.tag, tag),
    whereIds: (ids: number[]) => inArray(channels.id, ids),
    whereTagAndIds: (tag: string, ids: number[]) => and(eq(channels.tag, tag), inArray(channels.id, ids)),
  };
}

export type ChannelRepo = ReturnType<typeof createChannelRepo>;

import { and, desc, eq, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { batches } from '../db/schema/batches.ts';
import { files, type StoredFile } from '../db/schema/files.ts';

/** The console's reads of batches and their files (the relay writes them). */
export function createBatchRepo(db: Executor) {
  return {
    /** Newest first; `userId` undefined: every user's (administrators). */
    async list(
      filter: { userId?: number | undefined; status?: string | undefined },
      page: { offset: number; limit: number },
    ) {
      const conditions: SQL[] = [];
      if (filter.userId !== undefined) conditions.push(eq(batches.userId, filter.userId));
      if (filter.status) conditions.push(eq(batches.status, filter.status));
      return db
        .select()
        .from(batches)
        .where(conditions.length > 0 ? and(...conditions) : undefined)
        .orderBy(desc(batches.createdAt), desc(batches.id))
        .offset(page.offset)
        .limit(page.limit);
    },
    /** A file by id, the user's own unless `userId` is undefined (administrators). */
    async file(id: string, userId: number | undefined): Promise<StoredFile | undefined> {
      const [row] = await db
        .select()
        .from(files)
        .where(userId === undefined ? eq(files.id, id) : and(eq(files.id, id), eq(files.userId, userId)));
      return row;
    },
  };
}

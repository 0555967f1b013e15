import { and, desc, eq, ilike, isNull, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type NewToken, type Token, tokens } from '../db/schema/index.ts';

/** Escapes LIKE wildcards so a keyword is matched as typed. */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export interface TokenPage {
  readonly rows: Token[];
  readonly total: number;
}

/** Data access for API tokens. Every method takes the owner's id first: a user only ever reaches their own. */
export function createTokenRepo(db: Executor) {
  const owned = (userId: number, extra?: SQL) =>
    and(eq(tokens.userId, userId), isNull(tokens.deletedAt), extra);

  async function page(where: SQL | undefined, pageNo: number, size: number): Promise<TokenPage> {
    const [count] = await db
      .select({ total: sql<number>`count(*)`.mapWith(Number) })
      .from(tokens)
      .where(where);
    const rows = await db
      .select()
      .from(tokens)
      .where(where)
      .orderBy(desc(tokens.id))
      .limit(size)
      .offset((pageNo - 1) * size);
    return { rows, total: count?.total ?? 0 };
  }

  return {
    /** Newest first. */
    list(userId: number, pageNo: number, size: number): Promise<TokenPage> {
      return page(owned(userId), pageNo, size);
    },

    /** Name contains `keyword` and key contains `key` (any case); blank parts do not filter. */
    search(
      userId: number,
      query: { keyword: string; key: string },
      pageNo: number,
      size: number,
    ): Promise<TokenPage> {
      const where = owned(
        userId,
        and(
          query.keyword ? ilike(tokens.name, `%${escapeLike(query.keyword)}%`) : undefined,
          query.key ? ilike(tokens.key, `%${escapeLike(query.key)}%`) : undefined,
        ),
      );
      return page(where, pageNo, size);
    },

    async find(userId: number, id: number): Promise<Token | undefined> {
      const [row] = await db
        .select()
        .from(tokens)
        .where(owned(userId, eq(tokens.id, id)))
        .limit(1);
      return row;
    },

    /** The live token with this key (without `sk-`), whoever owns it. */
    async findByKey(key: string): Promise<Token | undefined> {
      const [row] = await db
        .select()
        .from(tokens)
        .where(and(eq(tokens.key, key), isNull(tokens.deletedAt)))
        .limit(1);
      return row;
    },

    async insert(token: NewToken): Promise<Token> {
      const [row] = await db.insert(tokens).values(token).returning();
      return row!;
    },

    async update(userId: number, id: number, patch: Partial<NewToken>): Promise<Token | undefined> {
      const [row] = await db
        .update(tokens)
        .set(patch)
        .where(owned(userId, eq(tokens.id, id)))
        .returning();
      return row;
    },

    /** Soft delete; answers whether a token of this user went. */
    async delete(userId: number, id: number): Promise<boolean> {
      const gone = await db
        .update(tokens)
        .set({ deletedAt: new Date() })
        .where(owned(userId, eq(tokens.id, id)))
        .returning({ id: tokens.id });
      return gone.length > 0;
    },
  };
}

export type TokenRepo = ReturnType<typeof createTokenRepo>;

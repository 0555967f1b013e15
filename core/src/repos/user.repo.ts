import { and, count, desc, eq, ilike, isNull, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type NewUser, type User, users } from '../db/schema/index.ts';

/** The admin search: `keyword` matches the id (when numeric) or part of the username, email or display name. */
export interface UserSearch {
  readonly keyword?: string | undefined;
  /** Exact group name. */
  readonly group?: string | undefined;
}

/** Escapes LIKE wildcards so a keyword is matched as typed. */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function searchConditions(search: UserSearch): SQL | undefined {
  const conditions: SQL[] = [];
  const keyword = search.keyword?.trim();
  if (keyword) {
    const pattern = `%${escapeLike(keyword)}%`;
    const matches: SQL[] = [
      ilike(users.username, pattern),
      ilike(users.email, pattern),
      ilike(users.displayName, pattern),
    ];
    if (/^\d{1,9}$/.test(keyword)) matches.push(eq(users.id, Number(keyword)));
    conditions.push(or(...matches)!);
  }
  if (search.group?.trim()) conditions.push(eq(users.group, search.group.trim()));
  return conditions.length ? and(...conditions) : undefined;
}

/** Data access for users. Soft-deleted users are invisible to everything but the admin list and name checks. */
export function createUserRepo(db: Executor) {
  return {
    async findById(id: number, options: { includeDeleted?: boolean } = {}): Promise<User | undefined> {
      const where = options.includeDeleted
        ? eq(users.id, id)
        : and(eq(users.id, id), isNull(users.deletedAt));
      const [row] = await db.select().from(users).where(where).limit(1);
      return row;
    },

    /** Sign-in accepts the username or the email address. */
    async findByLogin(login: string): Promise<User | undefined> {
      const [row] = await db
        .select()
        .from(users)
        .where(
          and(
            isNull(users.deletedAt),
            or(eq(users.username, login), and(sql`${users.email} <> ''`, eq(users.email, login))),
          ),
        )
        .orderBy(sql`${users.username} = ${login} desc`)
        .limit(1);
      return row;
    },

    async findByAccessToken(token: string): Promise<User | undefined> {
      const [row] = await db
        .select()
        .from(users)
        .where(and(eq(users.accessToken, token), isNull(users.deletedAt)))
        .limit(1);
      return row;
    },

    async findByAffCode(code: string): Promise<User | undefined> {
      const [row] = await db
        .select()
        .from(users)
        .where(and(eq(users.affCode, code), isNull(users.deletedAt)))
        .limit(1);
      return row;
    },

    /** Names of deregistered users stay taken, so logs and invites never point at a stranger. */
    async isUsernameTaken(username: string, exceptId?: number): Promise<boolean> {
      const [row] = await db
        .select({ id: users.id })
        .from(users)
        .where(
          exceptId
            ? and(eq(users.username, username), sql`${users.id} <> ${exceptId}`)
            : eq(users.username, username),
        )
        .limit(1);
      return row !== undefined;
    },

    async isEmailTaken(email: string, exceptId?: number): Promise<boolean> {
      const [row] = await db
        .select({ id: users.id })
        .from(users)
        .where(
          and(
            eq(users.email, email),
            isNull(users.deletedAt),
            exceptId ? sql`${users.id} <> ${exceptId}` : undefined,
          ),
        )
        .limit(1);
      return row !== undefined;
    },

    /**
     * One page of the admin list, newest first. Deregistered users are included (the console shows them as
     * such). `page` counts from 1.
     */
    async listPage(
      search: UserSearch,
      page: { page: number; pageSize: number },
    ): Promise<{ rows: User[]; total: number }> {
      const where = searchConditions(search);
      const rows = await db
        .select()
        .from(users)
        .where(where)
        .orderBy(desc(users.id))
        .limit(page.pageSize)
        .offset((page.page - 1) * page.pageSize);
      const [counted] = await db.select({ total: count() }).from(users).where(where);
      return { rows, total: Number(counted?.total ?? 0) };
    },

    async hasRoot(): Promise<boolean> {
      const [row] = await db.select({ id: users.id }).from(users).where(sql`${users.role} >= 100`).limit(1);
      return row !== undefined;
    },

    async insert(user: NewUser): Promise<User> {
      const [row] = await db.insert(users).values(user).returning();
      return row!;
    },

    async update(id: number, patch: Partial<NewUser>): Promise<User | undefined> {
      const [row] = await db.update(users).set(patch).where(eq(users.id, id)).returning();
      return row;
    },

    /** Adds `delta` (may be negative) to the balance; refuses to go below zero. Returns the new row or undefined. */
    async addQuota(id: number, delta: number): Promise<User | undefined> {
      const [row] = await db
        .update(users)
        .set({ quota: sql`${users.quota} + ${delta}` })
        .where(and(eq(users.id, id), sql`${users.quota} + ${delta} >= 0`))
        .returning();
      return row;
    },
  };
}

export type UserRepo = ReturnType<typeof createUserRepo>;

import { bigint, customType, index, integer, pgTable, varchar } from 'drizzle-orm/pg-core';
import { unixSeconds } from './columns.ts';

/** Raw bytes (Postgres `bytea`), read back as a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

/**
 * Files a user uploaded through `/v1/files` (and the output and error files of their batches), OpenAI's file object
 * one to one. The bytes live where the deployment keeps data (core/src/files/store.ts): `file_contents` below, or an
 * S3-compatible object store under the key `files/<id>`.
 */
export const files = pgTable(
  'files',
  {
    /** `file-` and 24 hex digits, the shape OpenAI's ids have. */
    id: varchar('id', { length: 64 }).primaryKey(),
    userId: integer('user_id').notNull(),
    tokenId: integer('token_id').notNull().default(0),
    purpose: varchar('purpose', { length: 32 }).notNull(),
    filename: varchar('filename', { length: 255 }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    createdAt: unixSeconds('created_at').notNull(),
    /** 0: kept until deleted. */
    expiresAt: unixSeconds('expires_at').notNull().default(0),
    /** Where the bytes are: `database` or `s3`. */
    storage: varchar('storage', { length: 16 }).notNull(),
  },
  (t) => [index('idx_files_user_id').on(t.userId, t.createdAt)],
);

export type StoredFile = typeof files.$inferSelect;
export type NewStoredFile = typeof files.$inferInsert;

/** The bytes of the files kept in the database (no object store configured). */
export const fileContents = pgTable('file_contents', {
  fileId: varchar('file_id', { length: 64 }).primaryKey(),
  content: bytea('content').notNull(),
});

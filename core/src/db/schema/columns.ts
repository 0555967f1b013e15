import { bigint, timestamp } from 'drizzle-orm/pg-core';

/** Unix seconds, stored as bigint and read back as a JS number (safe to 2^53). */
export const unixSeconds = (name: string) => bigint(name, { mode: 'number' });

/** Quota amounts: 500000 units are one US dollar, so int4 would overflow at about $4,300. */
export const quotaAmount = (name: string) => bigint(name, { mode: 'number' });

/** Soft-delete marker; rows with a value are hidden from everything except admin user lists. */
export const deletedAt = () => timestamp('deleted_at', { withTimezone: true, mode: 'date' });

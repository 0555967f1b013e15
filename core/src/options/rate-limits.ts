/**
 * The relay's limits beside the per-user request rate limit (docs/adr/0028): requests per minute, tokens per
 * minute and concurrent requests, set per user (a default for every user, replaced per group), per token, per
 * model and per channel. The closed sets and the one schema of a limit set live here so the options, the `/api`
 * contracts, the console and the operator read them the same way.
 */
import { z } from 'zod';
import { MAX_LIMIT } from './limit-bound.ts';

/** Where a limit is counted. `user` and `group` are one counter per user: a group's entry replaces the default. */
export const LimitScope = {
  User: 'user',
  Group: 'group',
  Token: 'token',
  Model: 'model',
  Channel: 'channel',
} as const;
export type LimitScope = (typeof LimitScope)[keyof typeof LimitScope];

/** What a limit counts: requests per minute, tokens per minute, requests in flight. */
export const LimitKind = {
  Requests: 'requests',
  Tokens: 'tokens',
  Concurrency: 'concurrency',
} as const;
export type LimitKind = (typeof LimitKind)[keyof typeof LimitKind];

/** One limit: a whole number of 0 or more, 0 meaning no limit. */
export const limitValueSchema = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(0, 'must be 0 or more (0 is no limit)')
  .max(MAX_LIMIT, `must be at most ${MAX_LIMIT}`);

/** Requests per minute, tokens per minute and concurrent requests; a missing or 0 field is no limit. */
export const limitSetSchema = z.strictObject(
  {
    rpm: limitValueSchema.optional(),
    tpm: limitValueSchema.optional(),
    concurrency: limitValueSchema.optional(),
  },
  { error: 'must be an object of rpm, tpm and concurrency, each a whole number of 0 or more' },
);
export type LimitSet = z.infer<typeof limitSetSchema>;

/** A name (group or model) → its limit set. */
export const limitMapSchema = z.record(z.string().trim().min(1, 'a name must not be empty'), limitSetSchema);
export type LimitMap = z.infer<typeof limitMapSchema>;

/** Whether a set limits anything. */
export const hasLimits = (set: LimitSet | undefined): set is LimitSet =>
  set !== undefined && ((set.rpm ?? 0) > 0 || (set.tpm ?? 0) > 0 || (set.concurrency ?? 0) > 0);

/**
 * A JSON object as read from an untrusted body or answer: any keys, values unknown until checked. Plain values with
 * no imports, so the console can take this file too.
 */
export type Json = Record<string, unknown>;

/** Whether `value` is a JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

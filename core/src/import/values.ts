/**
 * Driver values to Turnpike's column types. The three sources answer the same column in different shapes: SQLite
 * integers for booleans and text for times, MySQL `0`/`1` and date strings, Postgres booleans, Dates and int8 as
 * text; JSON columns arrive as text or as parsed objects.
 */

export function toNumber(value: unknown, fallback = 0): number {
  if (value === null || value === undefined || value === '') return fallback;
  if (typeof value === 'number') return Number.isFinite(value) ? value : fallback;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  const parsed = Number(String(value).trim());
  return Number.isFinite(parsed) ? parsed : fallback;
}

export const toInt = (value: unknown, fallback = 0): number => Math.trunc(toNumber(value, fallback));

export function toText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Text, or null for a missing or empty value (columns that are nullable, or unique when set). */
export function toNullableText(value: unknown): string | null {
  const text = toText(value);
  return text === '' ? null : text;
}

export function toBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value) !== 0;
  if (Buffer.isBuffer(value)) return value.length > 0 && value[0] !== 0;
  return ['1', 't', 'true', 'y', 'yes'].includes(
    String(value ?? '')
      .trim()
      .toLowerCase(),
  );
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d+))?\s*(Z|[+-]\d\d(?::?\d\d)?)?/;

/**
 * A soft-delete time: a Date from pg, `2024-05-01 10:00:00.123456+08:00` from GORM's SQLite driver, a zone-less
 * string from MySQL (read as UTC). Null when unset or unreadable.
 */
export function toTime(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  const match = TIMESTAMP.exec(String(value).trim());
  if (!match) return null;
  const [, day, clock, fraction = '0', zone = 'Z'] = match;
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const offset =
    zone === 'Z'
      ? 'Z'
      : zone.length === 3
        ? `${zone}:00`
        : zone.includes(':')
          ? zone
          : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const parsed = new Date(`${day}T${clock}.${millis}${offset}`);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** A JSON column as parsed JSON, or null when empty or not JSON. */
export function toJson(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'object' && !Buffer.isBuffer(value)) return value;
  try {
    return JSON.parse(toText(value));
  } catch {
    return null;
  }
}

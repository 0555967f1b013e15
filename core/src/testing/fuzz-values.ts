/**
 * Hostile input for the fuzz suites (api/src/fuzz.int.test.ts, relay/src/fuzz.int.test.ts): a small seeded PRNG,
 * so a failing run is replayed with the same seed, and generators of what a hostile but careful client sends —
 * malformed JSON, wrong types, NUL bytes and lone surrogates, huge strings and numbers, SQL- and path-looking text,
 * wrong content types, oversized and compressed-bomb bodies. Nothing here reaches beyond loopback.
 */
import { gzipSync } from 'node:zlib';

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

/** mulberry32: tiny, fast, and the same sequence for the same seed on every machine. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (items) => items[int(items.length)] as (typeof items)[number],
    chance: (p) => next() < p,
  };
}

/** The seed of a run: FUZZ_SEED when set (to replay a failure), else a fixed one. */
export function fuzzSeed(fallback: number): number {
  const given = Number(process.env.FUZZ_SEED);
  return Number.isSafeInteger(given) ? given : fallback;
}

export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00y',
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '1; SELECT pg_sleep(5)',
  '%',
  '_',
  '\\',
  '"',
  '../../../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '/dev/null',
  'C:\\Windows\\system32',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: template-injection text, sent as is
  '{{7*7}}${7*7}',
  '%s%n%x',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e400',
  '99999999999999999999999999',
  '中文😀\u202e',
  '\r\nX-Injected: 1',
  'http://127.0.0.1:9/',
  'a'.repeat(300),
  'b'.repeat(70_000),
];

export const HOSTILE_NUMBERS: readonly number[] = [
  0,
  -1,
  1,
  2,
  1.5,
  -0.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  1e21,
  1e308,
  -1e308,
];

/** JSON number texts JavaScript reads as Infinity, -Infinity or a lossy float. */
export const HOSTILE_NUMBER_TEXTS: readonly string[] = [
  '1e400',
  '-1e400',
  '1'.repeat(400),
  `0.${'1'.repeat(400)}`,
];

/** Query and path values: percent-encoded, as a client would put them on the wire. */
export const HOSTILE_URL_VALUES: readonly string[] = [
  '',
  '0',
  '-1',
  '1.5',
  '99999999999999999999',
  '1e400',
  'abc',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%E0',
  '%27%20OR%201%3D1--',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '__proto__',
  'constructor',
  encodeURIComponent('中文😀'),
  'x'.repeat(150),
  '%25',
  'true',
  '[]',
];

/** A value of any JSON type, hostile where it can be; `depth` bounds nesting. */
export function hostileValue(rng: Random, fields: readonly string[], depth = 0): unknown {
  const roll = rng.int(depth > 2 ? 6 : 9);
  switch (roll) {
    case 0:
    case 1:
    case 2:
      return rng.pick(HOSTILE_STRINGS);
    case 3:
      return rng.pick(HOSTILE_NUMBERS);
    case 4:
      return rng.pick([true, false, null]);
    case 5:
      return rng.int(1000);
    case 6:
      return Array.from({ length: rng.int(4) }, () => hostileValue(rng, fields, depth + 1));
    default:
      return hostileObject(rng, fields, depth + 1);
  }
}

/** An object of 1 to 6 fields, mostly named as the routes' contracts name them. */
export function hostileObject(rng: Random, fields: readonly string[], depth = 0): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const count = 1 + rng.int(6);
  for (let i = 0; i < count; i++) {
    const name =
      fields.length > 0 && rng.chance(0.85) ? rng.pick(fields) : rng.pick(HOSTILE_STRINGS).slice(0, 40);
    object[name] = hostileValue(rng, fields, depth);
  }
  return object;
}

export interface FuzzBody {
  /** What kind of hostile body this is, for the report. */
  readonly label: string;
  readonly payload: string | Buffer;
  readonly headers: Record<string, string>;
}

const JSON_TYPE = { 'content-type': 'application/json' };

let bombCache: Map<number, Buffer> | undefined;

/** `size` zero bytes gzipped (about a thousandth of that on the wire). */
export function gzipBomb(size: number): Buffer {
  bombCache ??= new Map();
  let bomb = bombCache.get(size);
  if (!bomb) {
    bomb = gzipSync(Buffer.alloc(size, 0x20), { level: 9 });
    bombCache.set(size, bomb);
  }
  return bomb;
}

const oversizeCache = new Map<number, Buffer>();

/** A JSON body just past `bodyLimit` (made once per limit). */
function oversizedBody(bodyLimit: number): Buffer {
  let body = oversizeCache.get(bodyLimit);
  if (!body) {
    body = Buffer.alloc(bodyLimit + 1024, 0x61);
    body.write('{"a":"', 0);
    body.write('"}', body.length - 2);
    oversizeCache.set(bodyLimit, body);
  }
  return body;
}

/**
 * A hostile request body. `bodyLimit` sizes the oversized and compressed-bomb bodies just past the app's limit;
 * `base` (a valid request) is mutated field by field when given, so the request gets past the first checks.
 */
export function hostileBody(
  rng: Random,
  fields: readonly string[],
  bodyLimit: number,
  base?: Record<string, unknown>,
): FuzzBody {
  const kind = rng.int(12);
  switch (kind) {
    case 0:
      return {
        label: 'malformed JSON',
        payload: rng.pick([
          '{',
          '{"a":',
          '[1,2',
          'nul',
          '{"a":1,}',
          "{'a':1}",
          '\u0000',
          '{"a":"\\ud800"',
          '{"__proto__":{"x":1}}',
        ]),
        headers: JSON_TYPE,
      };
    case 1:
      return {
        label: 'wrong top-level type',
        payload: rng.pick(['[]', '"text"', '42', 'null', 'true', '[{"id":1}]']),
        headers: JSON_TYPE,
      };
    case 2: {
      const field = fields.length > 0 ? rng.pick(fields) : 'id';
      return {
        label: 'huge number',
        payload: `{"${field}":${rng.pick(HOSTILE_NUMBER_TEXTS)}}`,
        headers: JSON_TYPE,
      };
    }
    case 3:
      return {
        label: 'wrong content type',
        payload: rng.pick([
          'id=1&name=%00',
          '<a>1</a>',
          'plain text',
          '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
        ]),
        headers: {
          'content-type': rng.pick([
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/xml',
            'multipart/form-data; boundary=x',
            'application/octet-stream',
            'application/json; charset=utf-7',
          ]),
        },
      };
    case 4: {
      let deep = '1';
      const depth = rng.pick([100, 5_000, 100_000]);
      deep = `${'['.repeat(depth)}${deep}${']'.repeat(depth)}`;
      return { label: `nested ${depth} deep`, payload: `{"a":${deep}}`, headers: JSON_TYPE };
    }
    case 5:
      return { label: 'oversized body', payload: oversizedBody(bodyLimit), headers: JSON_TYPE };
    case 6:
      return {
        label: 'gzip bomb',
        payload: gzipBomb(bodyLimit * 4),
        headers: { ...JSON_TYPE, 'content-encoding': rng.pick(['gzip', 'deflate', 'br', 'x-unknown']) },
      };
    case 7:
      return { label: 'empty JSON body', payload: '', headers: JSON_TYPE };
    default: {
      const object = base && rng.chance(0.6) ? mutate(rng, base, fields) : hostileObject(rng, fields);
      return {
        label: base ? 'mutated fields' : 'hostile fields',
        payload: JSON.stringify(object),
        headers: JSON_TYPE,
      };
    }
  }
}

/** `base` with one to three fields replaced by hostile values (or removed). */
function mutate(
  rng: Random,
  base: Record<string, unknown>,
  fields: readonly string[],
): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base };
  const keys = Object.keys(copy);
  const count = 1 + rng.int(3);
  for (let i = 0; i < count; i++) {
    const key =
      keys.length > 0 && rng.chance(0.8) ? rng.pick(keys) : rng.pick(fields.length ? fields : ['x']);
    if (rng.chance(0.1)) delete copy[key];
    else copy[key] = hostileValue(rng, fields, 1);
  }
  return copy;
}

/** A query string of one to four hostile parameters (repeated names make arrays). */
export function hostileQuery(rng: Random, fields: readonly string[]): string {
  const count = 1 + rng.int(4);
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    const name =
      fields.length > 0 && rng.chance(0.85) ? rng.pick(fields) : rng.pick(['x', '__proto__', 'a[b]', '%00']);
    parts.push(`${name}=${rng.pick(HOSTILE_URL_VALUES)}`);
    if (rng.chance(0.1)) parts.push(`${name}=${rng.pick(HOSTILE_URL_VALUES)}`);
  }
  return parts.join('&');
}

/** `url` with every `:param` (and a trailing `*`) filled with a hostile path value. */
export function fillParamsHostile(rng: Random, url: string): string {
  return url
    .replace(/:[A-Za-z0-9_]+(\([^)]*\))?/g, () => rng.pick(HOSTILE_URL_VALUES) || '0')
    .replace(/\*$/, () => rng.pick(HOSTILE_URL_VALUES) || 'x');
}

/** What a contract field accepts, as read from its zod schema: base types, and the values of an enum. */
export interface FieldType {
  readonly types: ReadonlySet<string>;
  readonly values: readonly unknown[];
}
export type FieldTypes = ReadonlyMap<string, FieldType>;

/**
 * Field names and what they accept, read from zod schemas (any module's exports): hostile requests name real
 * fields with values of the right type, so they get past validation and reach the queries.
 */
export function readFieldTypes(modules: readonly Record<string, unknown>[]): FieldTypes {
  const fields = new Map<string, { types: Set<string>; values: unknown[] }>();
  const typeOf = (schema: unknown, into: { types: Set<string>; values: unknown[] }, depth: number) => {
    const def = (schema as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
    if (!def || depth > 8) return;
    const type = String(def.type);
    if (['optional', 'nullable', 'default', 'catch', 'readonly', 'nonoptional', 'prefault'].includes(type))
      return typeOf(def.innerType, into, depth + 1);
    if (type === 'pipe') return typeOf(def.in, into, depth + 1);
    if (type === 'union') {
      for (const option of (def.options as unknown[]) ?? []) typeOf(option, into, depth + 1);
      return;
    }
    if (type === 'enum') into.values.push(...Object.values((def.entries as Record<string, unknown>) ?? {}));
    if (type === 'literal') into.values.push(...((def.values as unknown[]) ?? []));
    into.types.add(type);
  };
  const visit = (value: unknown, depth: number) => {
    if (!value || typeof value !== 'object' || depth > 6) return;
    const shape = (value as { shape?: unknown }).shape;
    if (shape && typeof shape === 'object') {
      for (const [key, inner] of Object.entries(shape)) {
        const entry = fields.get(key) ?? { types: new Set<string>(), values: [] };
        fields.set(key, entry);
        typeOf(inner, entry, 0);
        visit(inner, depth + 1);
      }
    }
    const def = (value as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (def) for (const key of ['innerType', 'in', 'out', 'element', 'schema']) visit(def[key], depth + 1);
  };
  for (const module of modules) for (const value of Object.values(module)) visit(value, 0);
  return fields;
}

/** Strings that break storage or queries when they reach the database. */
const DATABASE_HOSTILE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00',
  "' OR '1'='1",
  '%',
  '_',
  '\\',
  'b'.repeat(70_000),
  '99999999999999999999999999',
  '1e400',
];

/** A hostile value of a type `field` accepts. */
export function typedValue(rng: Random, field: FieldType | undefined, allFields: readonly string[]): unknown {
  if (!field) return hostileValue(rng, allFields, 2);
  if (field.values.length > 0 && rng.chance(0.5)) return rng.pick(field.values);
  const type = rng.pick([...field.types]);
  switch (type) {
    case 'string':
      return rng.chance(0.7) ? rng.pick(DATABASE_HOSTILE) : rng.pick(HOSTILE_STRINGS);
    case 'number':
    case 'int':
    case 'bigint':
      return rng.pick(HOSTILE_NUMBERS);
    case 'boolean':
      return rng.chance(0.5);
    case 'array':
      return Array.from({ length: 1 + rng.int(3) }, () =>
        rng.chance(0.5) ? rng.pick(DATABASE_HOSTILE) : rng.pick(HOSTILE_NUMBERS),
      );
    default:
      return hostileValue(rng, allFields, 2);
  }
}

/** Every known field, each with a hostile value of its own type: whatever a route reads, it gets one. */
export function saturatedObject(rng: Random, fields: FieldTypes): Record<string, unknown> {
  const names = [...fields.keys()];
  const object: Record<string, unknown> = {};
  for (const name of names) object[name] = typedValue(rng, fields.get(name), names);
  return object;
}

/** Every known field in the query, each with a hostile (percent-encoded) value of its type. */
export function saturatedQuery(rng: Random, fields: FieldTypes): string {
  const names = [...fields.keys()];
  return names
    .map((name) => {
      const value = typedValue(rng, fields.get(name), names);
      const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).slice(0, 300);
      return `${encodeURIComponent(name)}=${encodeURIComponent(text.isWellFormed() ? text : text.toWellFormed()).replace('%EF%BF%BD', '%ED%A0%80')}`;
    })
    .join('&');
}

import type { z } from 'zod';

/** How an option's text is read; the console picks its input widget by this. */
export type OptionKind = 'boolean' | 'int' | 'float' | 'string' | 'list' | 'json';

/** Text read into a value, or what is wrong with it, phrased to follow the key: `must be true or false`. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: string };

/**
 * One option: how its stored text is read and written back, its default, and whether it is a secret.
 * Values are read once per change and shared, so `parse` must return a fresh value each call.
 */
export interface OptionSpec<T> {
  readonly kind: OptionKind;
  /** The value of a key that has no row, as stored text. */
  readonly default: string;
  /** Marked secret by hand; names ending in Token, Secret or Key are secret anyway (`isSecretOptionKey`). */
  readonly secret: boolean;
  /** Reads text (as typed by a person or stored) into a value, or says what is wrong. */
  parse(text: string): Parsed<T>;
  /** The normalised text stored for a value. */
  format(value: T): string;
}

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(problem: string): Parsed<T> => ({ ok: false, problem });

function spec<T>(
  kind: OptionKind,
  fallback: T,
  parse: (text: string) => Parsed<T>,
  format: (v: T) => string,
) {
  const definition: OptionSpec<T> = { kind, default: format(fallback), secret: false, parse, format };
  return definition;
}

/** Marks an option secret even if its name does not say so: it is never listed back to the console. */
export function secret<T>(option: OptionSpec<T>): OptionSpec<T> {
  return { ...option, secret: true };
}

/** A switch stored as `true` or `false`; other spellings a script might send are accepted on input. */
export function bool(fallback: boolean): OptionSpec<boolean> {
  return spec(
    'boolean',
    fallback,
    (text) => {
      const word = text.trim().toLowerCase();
      if (word === 'true') return ok(true);
      if (word === 'false') return ok(false);
      return fail('must be true or false');
    },
    String,
  );
}

interface Range {
  readonly min?: number;
  readonly max?: number;
  /** Exclusive lower bound, for values that must be positive but may be fractional. */
  readonly above?: number;
}

function describeRange(noun: string, { min, max, above }: Range): string {
  if (min !== undefined && max !== undefined) return `must be ${noun} from ${min} to ${max}`;
  if (above !== undefined) return `must be ${noun} greater than ${above}`;
  if (min !== undefined) return `must be ${noun} of ${min} or more`;
  return `must be ${noun}`;
}

function isInRange(value: number, { min, max, above }: Range): boolean {
  return (
    (min === undefined || value >= min) &&
    (max === undefined || value <= max) &&
    (above === undefined || value > above)
  );
}

const INTEGER = /^[+-]?\d+$/;
// Number() alone would also take '', ' ', '0x1f' and 'Infinity'.
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** A whole number within a range. */
export function int(fallback: number, range: Range = {}): OptionSpec<number> {
  const problem = describeRange('an integer', range);
  return spec(
    'int',
    fallback,
    (text) => {
      const trimmed = text.trim();
      const value = Number(trimmed);
      return INTEGER.test(trimmed) && Number.isSafeInteger(value) && isInRange(value, range)
        ? ok(value)
        : fail(problem);
    },
    String,
  );
}

/** A decimal number within a range. */
export function float(fallback: number, range: Range = {}): OptionSpec<number> {
  const problem = describeRange('a number', range);
  return spec(
    'float',
    fallback,
    (text) => {
      const trimmed = text.trim();
      const value = Number(trimmed);
      return DECIMAL.test(trimmed) && Number.isFinite(value) && isInRange(value, range)
        ? ok(value)
        : fail(problem);
    },
    String,
  );
}

interface TextRules {
  /** Refuses empty text. */
  readonly required?: boolean;
  /** Keeps surrounding whitespace, for HTML and Markdown content. */
  readonly keepWhitespace?: boolean;
  /** Extra check on non-empty text, with the phrase shown when it fails. */
  readonly check?: { readonly test: (text: string) => boolean; readonly problem: string };
}

/** Free text; single-line values are trimmed, since pasted keys and names often carry a stray newline. */
export function text(fallback = '', rules: TextRules = {}): OptionSpec<string> {
  return spec(
    'string',
    fallback,
    (input) => {
      const value = rules.keepWhitespace ? input : input.trim();
      if (value.trim() === '') return rules.required ? fail('must not be empty') : ok(value);
      if (rules.check && !rules.check.test(value)) return fail(rules.check.problem);
      return ok(value);
    },
    (value) => value,
  );
}

/** HTML, Markdown or a URL shown to people as typed, whitespace included. */
export function content(fallback = ''): OptionSpec<string> {
  return text(fallback, { keepWhitespace: true });
}

function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The base address of a service (ours or an upstream one) that paths are appended to: empty or an http(s)
 * URL, stored without trailing slashes so `${address}/api/...` never has a double slash (a known cause of
 * failed payment callbacks in the reference).
 */
export function address(fallback = ''): OptionSpec<string> {
  return spec(
    'string',
    fallback,
    (input) => {
      const value = input.trim().replace(/\/+$/, '');
      return value === '' || isHttpUrl(value)
        ? ok(value)
        : fail('must be empty or an http:// or https:// address');
    },
    (value) => value,
  );
}

/** A link shown to people as is: empty or an http(s) URL. */
export function link(fallback = ''): OptionSpec<string> {
  return text(fallback, {
    check: { test: isHttpUrl, problem: 'must be empty or an http:// or https:// link' },
  });
}

function joinWords(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** One of a closed set of words. */
export function oneOf<const V extends string>(values: readonly V[], fallback: V): OptionSpec<V> {
  const problem = `must be one of ${joinWords(values)}`;
  return spec(
    'string',
    fallback,
    (input) => {
      const value = input.trim();
      return (values as readonly string[]).includes(value) ? ok(value as V) : fail(problem);
    },
    (value) => value,
  );
}

interface ListRules {
  /** Rewrites each item before it is checked and stored, e.g. to lower case. */
  readonly normalise?: (item: string) => string;
  readonly check?: { readonly test: (item: string) => boolean; readonly problem: string };
}

function splitList(input: string, separator: '\n' | ','): string[] {
  const parts = separator === '\n' ? input.split(/\r?\n/) : input.split(',');
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/**
 * A list kept as text, one item per line or comma-separated. Blank items and repeats are dropped, so the
 * stored text is exactly the list that is used.
 */
export function list(
  separator: '\n' | ',',
  fallback: readonly string[],
  rules: ListRules = {},
): OptionSpec<string[]> {
  return spec(
    'list',
    [...fallback],
    (input) => {
      const items = [...new Set(splitList(input, separator).map(rules.normalise ?? ((item) => item)))];
      const bad = rules.check ? items.find((item) => !rules.check?.test(item)) : undefined;
      return bad === undefined ? ok(items) : fail(`${rules.check?.problem}; "${bad}" is not one`);
    },
    (items) => items.join(separator),
  );
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'it does not match';
  const where = issue.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : JSON.stringify(String(part))))
    .join('');
  // A map key that fails its own rule (a service tier in capitals) says why, not only "Invalid key in record".
  const message = (issue.code === 'invalid_key' && issue.issues[0]?.message) || issue.message;
  return where ? `at ${where}: ${message}` : message;
}

/**
 * JSON text with a shape. `shape` completes the sentence "<key> must be ...", and the first problem zod finds
 * is added so a person can find it in a long map. Stored compact; the console pretty-prints it.
 */
export function json<S extends z.ZodType>(
  schema: S,
  fallback: z.output<S>,
  shape: string,
): OptionSpec<z.output<S>> {
  return spec(
    'json',
    fallback,
    (input) => {
      let raw: unknown;
      try {
        raw = JSON.parse(input);
      } catch (error) {
        return fail(`must be ${shape} (the text is not valid JSON: ${(error as Error).message})`);
      }
      const result = schema.safeParse(raw);
      return result.success ? ok(result.data) : fail(`must be ${shape} (${describeIssue(result.error)})`);
    },
    (value) => JSON.stringify(value),
  );
}

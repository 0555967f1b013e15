/**
 * The before and after of an audit row (docs/adr/0045): only what changed, with secrets masked. A change of one
 * price in a map of hundreds keeps that one entry; a channel's new key shows as changed, never as the key.
 */
import { isSecretOptionKey } from '../options/registry.ts';

/** What a secret field holds in an audit row: that there is a value, never the value. */
export const SECRET = '[secret]';

/**
 * Fields whose values are never written to the audit: a name ending in key, token, secret or password (any case,
 * the last dotted segment: `key`, `accessToken`, `oidc.client_secret`), and every option the registry keeps secret.
 */
export function isSecretField(name: string): boolean {
  const last = name.slice(name.lastIndexOf('.') + 1);
  return /(key|token|secret|password)$/i.test(last) || isSecretOptionKey(name);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const maskValue = (value: unknown) =>
  value === '' || value === null || value === undefined ? value : SECRET;

/** A state with its secret fields masked: the top-level fields of an object by name (see `isSecretField`). */
export function maskState(state: unknown): unknown {
  if (!isPlainObject(state)) return state;
  const masked: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(state))
    masked[field] = isSecretField(field) ? maskValue(value) : value;
  return masked;
}

/** How deep a request body is kept in an audit row; below it a body is cut (a hostile body nests 100,000 deep). */
const MAX_AUDIT_DEPTH = 32;

/** Masks secret fields at every depth (a request's body, whose shape no loader describes), cut below 32 levels. */
export function maskDeep(value: unknown, depth = 0): unknown {
  if (depth >= MAX_AUDIT_DEPTH && (Array.isArray(value) || isPlainObject(value))) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((inner) => maskDeep(inner, depth + 1));
  if (!isPlainObject(value)) return value;
  const masked: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value))
    masked[field] = isSecretField(field) ? maskValue(inner) : maskDeep(inner, depth + 1);
  return masked;
}

/** The parts of two objects that differ, at every depth of nested objects; arrays and values compare whole. */
function diff(before: Record<string, unknown>, after: Record<string, unknown>) {
  const was: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[field];
    const a = after[field];
    if (same(b, a)) continue;
    if (isPlainObject(b) && isPlainObject(a)) {
      const inner = diff(b, a);
      was[field] = inner.was;
      now[field] = inner.now;
      continue;
    }
    // A secret that changed shows as changed: the mask on both sides, the field present.
    was[field] = b;
    now[field] = a;
  }
  return { was, now };
}

export interface StateChange {
  /** What the changed parts were; null for something created. */
  readonly before: unknown;
  /** What they became; null for something deleted. */
  readonly after: unknown;
}

/**
 * What changed between two states of one thing (undefined: it did not exist), masked. A thing created or deleted
 * keeps its whole state on the side it exists.
 */
export function changeOf(before: unknown, after: unknown): StateChange | undefined {
  if (before === undefined && after === undefined) return undefined;
  if (before === undefined) return { before: null, after: maskState(after) };
  if (after === undefined) return { before: maskState(before), after: null };
  if (same(before, after)) return undefined;
  if (!isPlainObject(before) || !isPlainObject(after)) return { before, after };
  const { was, now } = diff(before, after);
  // Secrets masked after the diff, so a changed secret is still told from an unchanged one.
  return { before: maskState(was), after: maskState(now) };
}

/**
 * The before and after of a change of several things, by id; one thing's are its own. Things that did not change
 * are left out.
 */
export function changesOf(
  ids: readonly string[],
  before: ReadonlyMap<string, unknown>,
  after: ReadonlyMap<string, unknown>,
): StateChange {
  const changes = new Map<string, StateChange>();
  for (const id of ids) {
    const change = changeOf(before.get(id), after.get(id));
    if (change) changes.set(id, change);
  }
  if (ids.length === 1) {
    const [only] = changes.values();
    return only ?? { before: null, after: null };
  }
  if (changes.size === 0) return { before: null, after: null };
  return {
    before: Object.fromEntries([...changes].map(([id, c]) => [id, c.before])),
    after: Object.fromEntries([...changes].map(([id, c]) => [id, c.after])),
  };
}

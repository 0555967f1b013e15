/**
 * Multi-key channels (docs/adr/0027): one channel row holds several keys in its sealed `key` column (one per line,
 * or a JSON array of service-account documents for the types whose key is a document) and their state in the
 * `channel_info` JSON column, shaped as the reference's `channel_info` so its clients and its exports read it:
 * `multi_key_status_list` / `_disabled_reason` / `_disabled_time` by key position, only for keys not enabled.
 *
 * Pure: no I/O, no crypto, so the console imports these types and rules too.
 */
import { findProviderType } from '../providers/catalogue.ts';

/** A key's status, numbered as the channel statuses are. */
export const KeyStatus = { Enabled: 1, Disabled: 2, AutoDisabled: 3 } as const;
export type KeyStatusValue = (typeof KeyStatus)[keyof typeof KeyStatus];

/** How the relay picks a key of a multi-key channel for each call. */
export const MultiKeyMode = { Random: 'random', Polling: 'polling' } as const;
export type MultiKeyModeValue = (typeof MultiKeyMode)[keyof typeof MultiKeyMode];
export const MULTI_KEY_MODES = Object.values(MultiKeyMode);

/** How a create turns its key lines into channels (the reference's `mode`). */
export const CreateMode = { Single: 'single', Batch: 'batch', MultiToSingle: 'multi_to_single' } as const;
export type CreateModeValue = (typeof CreateMode)[keyof typeof CreateMode];

/** How an edit's key field changes a channel's keys (the reference's `key_mode`). */
export const KeyMode = { Append: 'append', Replace: 'replace' } as const;
export type KeyModeValue = (typeof KeyMode)[keyof typeof KeyMode];

/** The `channel_info` object, as stored and as `/api/channel` shows it. */
export interface ChannelInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  /** Position → status, only for keys that are not enabled. */
  multi_key_status_list: Record<string, number>;
  multi_key_disabled_reason: Record<string, string>;
  /** Position → epoch seconds of the disable. */
  multi_key_disabled_time: Record<string, number>;
  multi_key_polling_index: number;
  multi_key_mode: MultiKeyModeValue;
}

export interface KeyState {
  readonly status: KeyStatusValue;
  readonly reason?: string;
  /** Epoch seconds of the disable. */
  readonly time?: number;
}

/** The keys of a channel with their states, parallel arrays. */
export interface KeyRing {
  readonly isMultiKey: boolean;
  readonly keys: readonly string[];
  readonly states: readonly KeyState[];
  readonly mode: MultiKeyModeValue;
  readonly pollingIndex: number;
}

const ENABLED: KeyState = { status: KeyStatus.Enabled };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const numberMap = (value: unknown): Record<string, number> => {
  const out: Record<string, number> = {};
  if (isRecord(value))
    for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && /^\d+$/.test(k)) out[k] = v;
  return out;
};

const textMap = (value: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (isRecord(value))
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string' && /^\d+$/.test(k)) out[k] = v;
  return out;
};

export const isMultiKeyMode = (value: unknown): value is MultiKeyModeValue =>
  value === MultiKeyMode.Random || value === MultiKeyMode.Polling;

/** The stored `channel_info` text read leniently: anything unreadable is a single-key channel. */
export function parseChannelInfo(text: string | null | undefined): ChannelInfo {
  let value: unknown;
  try {
    value = text ? JSON.parse(text) : undefined;
  } catch {
    value = undefined;
  }
  const info = isRecord(value) ? value : {};
  return {
    is_multi_key: info.is_multi_key === true,
    multi_key_size: typeof info.multi_key_size === 'number' ? info.multi_key_size : 0,
    multi_key_status_list: numberMap(info.multi_key_status_list),
    multi_key_disabled_reason: textMap(info.multi_key_disabled_reason),
    multi_key_disabled_time: numberMap(info.multi_key_disabled_time),
    multi_key_polling_index:
      typeof info.multi_key_polling_index === 'number' ? info.multi_key_polling_index : 0,
    multi_key_mode: isMultiKeyMode(info.multi_key_mode) ? info.multi_key_mode : MultiKeyMode.Random,
  };
}

const isDocumentType = (type: number): boolean => findProviderType(type)?.keyIsDocument === true;

/**
 * The keys of a key field as a person typed it: one per non-blank line; for the types whose key is a JSON document
 * (Vertex AI service accounts) one document, or each item of a JSON array of documents.
 */
export function splitKeyInput(type: number, text: string): string[] {
  const whole = text.trim();
  if (!whole) return [];
  if (isDocumentType(type)) {
    if (whole.startsWith('[')) {
      try {
        const items: unknown = JSON.parse(whole);
        if (Array.isArray(items))
          return items
            .map((item) => (typeof item === 'string' ? item.trim() : JSON.stringify(item)))
            .filter(Boolean);
      } catch {}
    }
    return [whole];
  }
  return [...new Set(whole.split(/\r?\n/).map((line) => line.trim()))].filter((line) => line.length > 0);
}

/** The keys of a stored (opened) key column: the whole text for a single-key channel. */
export function splitStoredKeys(type: number, text: string, isMultiKey: boolean): string[] {
  if (!isMultiKey) return text === '' ? [] : [text];
  return splitKeyInput(type, text);
}

/** The text the key column seals for these keys. */
export function joinKeys(type: number, keys: readonly string[], isMultiKey: boolean): string {
  if (!isMultiKey) return keys[0] ?? '';
  if (!isDocumentType(type)) return keys.join('\n');
  const items = keys.map((key) => {
    try {
      return JSON.parse(key) as unknown;
    } catch {
      return key;
    }
  });
  return JSON.stringify(items);
}

/** A channel's keys and their states, from its opened key text and its `channel_info`. */
export function ringOf(type: number, openedKey: string, info: ChannelInfo): KeyRing {
  const keys = splitStoredKeys(type, openedKey, info.is_multi_key);
  const states = keys.map((_, index): KeyState => {
    const status = info.multi_key_status_list[String(index)];
    if (!info.is_multi_key || status === undefined || status === KeyStatus.Enabled) return ENABLED;
    const state: { status: KeyStatusValue; reason?: string; time?: number } = {
      status: status === KeyStatus.AutoDisabled ? KeyStatus.AutoDisabled : KeyStatus.Disabled,
    };
    const reason = info.multi_key_disabled_reason[String(index)];
    const time = info.multi_key_disabled_time[String(index)];
    if (reason !== undefined) state.reason = reason;
    if (time !== undefined) state.time = time;
    return state;
  });
  return {
    isMultiKey: info.is_multi_key,
    keys,
    states,
    mode: info.multi_key_mode,
    pollingIndex: info.multi_key_polling_index,
  };
}

/** A new multi-key ring: every key enabled. */
export function newRing(keys: readonly string[], mode: MultiKeyModeValue): KeyRing {
  return { isMultiKey: true, keys: [...keys], states: keys.map(() => ENABLED), mode, pollingIndex: 0 };
}

/** The `channel_info` that stores a ring; null for a single-key channel that never was multi-key. */
export function infoOfRing(ring: KeyRing): ChannelInfo {
  const info: ChannelInfo = {
    is_multi_key: ring.isMultiKey,
    multi_key_size: ring.isMultiKey ? ring.keys.length : 0,
    multi_key_status_list: {},
    multi_key_disabled_reason: {},
    multi_key_disabled_time: {},
    multi_key_polling_index: ring.keys.length > 0 ? ring.pollingIndex % ring.keys.length : 0,
    multi_key_mode: ring.mode,
  };
  ring.states.forEach((state, index) => {
    if (state.status === KeyStatus.Enabled) return;
    info.multi_key_status_list[String(index)] = state.status;
    if (state.reason !== undefined) info.multi_key_disabled_reason[String(index)] = state.reason;
    if (state.time !== undefined) info.multi_key_disabled_time[String(index)] = state.time;
  });
  return info;
}

/** Adds keys not already held, enabled, after the others; a single-key channel becomes a multi-key one. */
export function appendKeys(ring: KeyRing, added: readonly string[]): KeyRing {
  const held = new Set(ring.keys);
  const fresh = [...new Set(added)].filter((key) => !held.has(key));
  return {
    ...ring,
    isMultiKey: true,
    keys: [...ring.keys, ...fresh],
    states: [...ring.states, ...fresh.map(() => ENABLED)],
  };
}

/**
 * The ring holding exactly `next`, in that order: a key that was held keeps its state (an auto-disabled key
 * stays disabled when the list is re-sent), a new one starts enabled.
 */
export function replaceKeys(ring: KeyRing, next: readonly string[], isMultiKey = true): KeyRing {
  const stateOf = new Map(ring.keys.map((key, index) => [key, ring.states[index] ?? ENABLED]));
  const keys = [...new Set(next)];
  return { ...ring, isMultiKey, keys, states: keys.map((key) => stateOf.get(key) ?? ENABLED) };
}

/** Sets the state of the keys at `indexes`. */
export function setKeyStates(ring: KeyRing, indexes: Iterable<number>, state: KeyState): KeyRing {
  const states = [...ring.states];
  for (const index of indexes) if (index >= 0 && index < states.length) states[index] = state;
  return { ...ring, states };
}

/** Drops the keys `drop` answers true for. */
export function deleteKeys(ring: KeyRing, drop: (state: KeyState, index: number) => boolean): KeyRing {
  const keys: string[] = [];
  const states: KeyState[] = [];
  ring.keys.forEach((key, index) => {
    const state = ring.states[index] ?? ENABLED;
    if (drop(state, index)) return;
    keys.push(key);
    states.push(state);
  });
  return { ...ring, keys, states };
}

export const enabledKeyCount = (ring: KeyRing): number =>
  ring.states.filter((state) => state.status === KeyStatus.Enabled).length;

/**
 * A key as people may see it: enough to tell keys apart, never enough to use one. A service-account document
 * shows its account's e-mail (not a secret) or nothing.
 */
export function maskKey(key: string): string {
  const text = key.trim();
  if (text.startsWith('{')) {
    try {
      const doc: unknown = JSON.parse(text);
      if (isRecord(doc) && typeof doc.client_email === 'string') return `service account ${doc.client_email}`;
    } catch {}
    return '{…}';
  }
  if (text.length <= 12) return `${text.slice(0, 2)}…`;
  return `${text.slice(0, 5)}…${text.slice(-4)}`;
}

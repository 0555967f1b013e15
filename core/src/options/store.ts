import { eq, inArray, sql } from 'drizzle-orm';
import { isInAmbientTransaction } from '../db/ambient.ts';
import type { Db } from '../db/client.ts';
import { options as optionsTable } from '../db/schema/options.ts';
import { AppError } from '../errors.ts';
import type { EventBus, GatewayEvent } from '../events/bus.ts';
import {
  isPriceOptionKey,
  listPriceEntries,
  overlayPriceEntries,
  type PriceEntry,
  type PriceOptionKey,
  stripPriceEntries,
} from './managed-options.ts';
import {
  type CheckedOption,
  defaultOptionText,
  defaultOptionValue,
  isOptionKey,
  isSecretOptionKey,
  type OptionKey,
  type OptionReader,
  type OptionValue,
  optionKeys,
  readOptionText,
  unknownOptionMessage,
  validateOptions,
} from './registry.ts';

/** One option as the console lists it. */
export interface OptionEntry {
  readonly key: OptionKey;
  readonly value: string;
}

/** Told which options changed value, after the cache holds the new values. */
export type OptionChangeListener = (keys: readonly OptionKey[]) => void;

export interface CreateOptionStoreOptions {
  readonly db: Db;
  readonly bus: EventBus;
  /** Period of the full reload that backs up change events; default 60 s. */
  readonly syncIntervalMs?: number;
  /**
   * Told about what the store survives but someone should hear of: a failed reload, a stored value that no
   * longer validates (its default is used instead), a failed publish, a throwing listener.
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * Every option, served from memory. Writes go to the database first, then to this cache, then out on the bus
 * so every process reloads the changed keys (ADR 0003). Reads never touch the database.
 *
 * A price map (ModelRatio, the group maps, ...) is served as its stored map with the entries Kubernetes
 * resources own laid over it (`option_sources`, docs/adr/0017): what the relay bills and what `GET /api/option/`
 * lists is that effective map. A save of a price map stores it without the owned entries.
 */
export interface OptionStore {
  /** Reads every row; keys without a row take their default. Rows of unknown keys are left alone. */
  load(): Promise<void>;
  /** Whether a key is a known option. */
  has(key: string): key is OptionKey;
  /** The current value, parsed once per change. JSON values are frozen and shared: never change them. */
  get<K extends OptionKey>(key: K): OptionValue<K>;
  /** The current value as stored text. */
  getText(key: OptionKey): string;
  /** Every known option with its text, in registry order; secrets only when asked for. */
  list(options?: { includeSecrets?: boolean }): OptionEntry[];
  /** Validates, stores and announces one value; throws AppError VALIDATION_FAILED and changes nothing if bad. */
  set(key: string, text: string): Promise<void>;
  /** Like `set` for several values, validated together and stored all or none. */
  setMany(entries: Iterable<readonly [key: string, text: string]>): Promise<void>;
  /** Back to the built-in default: the row is deleted, so later releases' defaults apply to it. */
  reset(key: string): Promise<void>;
  onChange(listener: OptionChangeListener): () => void;
  /** Follows changes made by other processes: change events plus the periodic full reload. */
  start(): void;
  stop(): void;
}

interface CachedOption {
  readonly text: string;
  readonly value: unknown;
}

const DEFAULT_SYNC_INTERVAL_MS = 60_000;

export function createOptionStore({
  db,
  bus,
  syncIntervalMs = DEFAULT_SYNC_INTERVAL_MS,
  onError = () => {},
}: CreateOptionStoreOptions): OptionStore {
  const cache = new Map<OptionKey, CachedOption>(
    optionKeys.map((key) => [key, { text: defaultOptionText(key), value: defaultOptionValue(key) }]),
  );
  const listeners = new Set<OptionChangeListener>();
  let unsubscribe: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  // Every cache update runs here one after another, each reading the database inside its turn, so an older
  // read can never land after a newer one and put back a stale value.
  let tail: Promise<unknown> = Promise.resolve();
  function serially<T>(job: () => Promise<T>): Promise<T> {
    // Inside an administrative change's transaction (docs/adr/0045) a reload queued ahead may be waiting for that
    // very transaction (the embedded database runs one at a time): the write goes first. Its change event goes out
    // once the transaction ends, and the reload it causes is queued here as usual, so the cache ends up right.
    if (isInAmbientTransaction()) return job();
    const run = tail.then(job);
    tail = run.catch(() => undefined);
    return run;
  }

  const read: OptionReader = (key) => cache.get(key)?.value as OptionValue<typeof key>;

  function notify(changed: OptionKey[]): void {
    if (changed.length === 0) return;
    for (const listener of listeners) {
      try {
        listener(changed);
      } catch (error) {
        onError(error);
      }
    }
  }

  function apply(checked: readonly CheckedOption[]): void {
    const changed: OptionKey[] = [];
    for (const { key, text, value } of checked) {
      if (cache.get(key)?.text === text) continue;
      cache.set(key, { text, value });
      changed.push(key);
    }
    notify(changed);
  }

  /** Stored text (or no row) to cache entries; a row that no longer validates falls back to the default. */
  function fromStored(
    key: OptionKey,
    stored: string | undefined,
    owned?: readonly PriceEntry[],
  ): CheckedOption {
    let checked: CheckedOption | undefined;
    if (stored !== undefined) {
      const result = readOptionText(key, stored);
      if (result.ok) checked = { key, text: result.value, value: result.parsed };
      else onError(new Error(`stored option ${key} is invalid, so its default is used: ${result.message}`));
    }
    checked ??= { key, text: defaultOptionText(key), value: defaultOptionValue(key) };
    return withOwned(checked, owned);
  }

  /** A price map with the owned entries laid over it (they were checked one by one when written). */
  function withOwned(checked: CheckedOption, owned: readonly PriceEntry[] | undefined): CheckedOption {
    if (!owned || owned.length === 0 || !isPriceOptionKey(checked.key)) return checked;
    const merged = overlayPriceEntries(checked.key, checked.value as Record<string, unknown>, owned);
    const result = readOptionText(checked.key, JSON.stringify(merged));
    if (result.ok) return { key: checked.key, text: result.value, value: result.parsed };
    onError(
      new Error(`owned entries of ${checked.key} are invalid, so they are left out: ${result.message}`),
    );
    return checked;
  }

  async function ownedEntries(keys: readonly OptionKey[]) {
    return listPriceEntries(db, keys.filter(isPriceOptionKey));
  }

  async function reload(keys: readonly OptionKey[] | 'all'): Promise<void> {
    const rows =
      keys === 'all'
        ? await db.select().from(optionsTable)
        : await db
            .select()
            .from(optionsTable)
            .where(inArray(optionsTable.key, [...keys]));
    const stored = new Map(rows.map((row) => [row.key, row.value]));
    const wanted = keys === 'all' ? optionKeys : keys;
    const owned = await ownedEntries(wanted);
    apply(wanted.map((key) => fromStored(key, stored.get(key), owned.get(key as PriceOptionKey))));
  }

  function reloadInBackground(keys: readonly OptionKey[] | 'all'): void {
    serially(() => reload(keys)).catch(onError);
  }

  function handleEvent(event: GatewayEvent): void {
    if (event.type === 'all.changed') reloadInBackground('all');
    if (event.type !== 'options.changed') return;
    const keys = event.keys.filter(isOptionKey);
    if (keys.length > 0) reloadInBackground(keys);
  }

  async function announce(keys: readonly OptionKey[]): Promise<void> {
    // The write is committed and this process is up to date; a lost event only delays the others until the
    // next full reload, so it must not fail the caller's save.
    await bus.publish({ type: 'options.changed', keys: [...keys] }).catch(onError);
  }

  /**
   * The rows to store for checked options and what to serve: a price map is stored without its owned entries
   * (keeping the stored value of an owned entry) and served with them.
   */
  async function storedAndServed(checked: readonly CheckedOption[]) {
    const priceKeys = checked.map((o) => o.key).filter(isPriceOptionKey);
    const owned = await ownedEntries(priceKeys);
    const storedRows =
      owned.size === 0
        ? []
        : await db
            .select()
            .from(optionsTable)
            .where(inArray(optionsTable.key, [...owned.keys()]));
    const storedMaps = new Map(storedRows.map((r) => [r.key, r.value]));
    return checked.map((option) => {
      const entries = owned.get(option.key as PriceOptionKey);
      if (!entries || !isPriceOptionKey(option.key)) return { row: option.text, served: option };
      const before = fromStored(option.key, storedMaps.get(option.key));
      const base = stripPriceEntries(
        option.key,
        option.value as Record<string, unknown>,
        before.value as Record<string, unknown>,
        entries,
      );
      const row = JSON.stringify(base);
      return { row, served: fromStored(option.key, row, entries) };
    });
  }

  /** Validation runs in the serial queue so two saves in this process cannot both pass a cross-option rule. */
  async function write(entries: Iterable<readonly [string, string]>): Promise<void> {
    const written = await serially(async () => {
      const result = validateOptions(entries, read);
      if (!result.ok) throw new AppError('VALIDATION_FAILED', result.message);
      if (result.options.length === 0) return [];
      const prepared = await storedAndServed(result.options);
      const rows = result.options.map(({ key }, i) => ({ key, value: prepared[i]?.row as string }));
      // One statement, so the values are stored all or none.
      await db
        .insert(optionsTable)
        .values(rows)
        .onConflictDoUpdate({ target: optionsTable.key, set: { value: sql`excluded.value` } });
      apply(prepared.map((p) => p.served));
      return result.options.map((option) => option.key);
    });
    if (written.length > 0) await announce(written);
  }

  return {
    async load() {
      await serially(() => reload('all'));
    },

    has: isOptionKey,

    get(key) {
      return read(key);
    },

    getText(key) {
      return cache.get(key)?.text ?? defaultOptionText(key);
    },

    list({ includeSecrets = false } = {}) {
      return optionKeys
        .filter((key) => includeSecrets || !isSecretOptionKey(key))
        .map((key) => ({ key, value: cache.get(key)?.text ?? defaultOptionText(key) }));
    },

    set(key, text) {
      return write([[key, text]]);
    },

    setMany(entries) {
      return write(entries);
    },

    async reset(key) {
      const resetKey = await serially(async () => {
        if (!isOptionKey(key)) throw new AppError('VALIDATION_FAILED', unknownOptionMessage(key));
        // The default must satisfy the cross-option rules too (e.g. GitHubClientId while GitHub sign-in is on).
        const result = validateOptions([[key, defaultOptionText(key)]], read);
        if (!result.ok) throw new AppError('VALIDATION_FAILED', result.message);
        await db.delete(optionsTable).where(eq(optionsTable.key, key));
        // Owned price entries stay: they are laid over the default as they were over the stored map.
        const owned = await ownedEntries([key]);
        apply([fromStored(key, undefined, owned.get(key as PriceOptionKey))]);
        return key;
      });
      await announce([resetKey]);
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    start() {
      if (unsubscribe) return;
      unsubscribe = bus.subscribe(handleEvent);
      timer = setInterval(() => reloadInBackground('all'), syncIntervalMs);
      // The safety net must not keep a finished process (a script, a test) alive.
      timer.unref();
    },

    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

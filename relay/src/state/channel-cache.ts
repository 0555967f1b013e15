/**
 * Channels and the routing table, held in memory. The table (group → model → priority tiers, see
 * routing/pick.ts) is rebuilt from every channel row on `channels.changed` and on a periodic safety reload
 * (`SYNC_FREQUENCY`). A change event starts a reload at once, or right after the one running, and events that
 * arrive meanwhile share that next reload: a burst of edits costs at most two reloads, and no edit waits longer
 * than the reload running plus its own (there is no debounce timer a stream of edits could keep re-arming). The
 * event bus waits for that reload, so a console write that answered success is already routable in this process
 * (docs/adr/0016).
 *
 * A channel's status is also kept here and checked at pick time, so a channel this process disables is skipped at
 * once. Channel keys are opened once per reload; an unreadable key (wrong CRYPTO_SECRET) makes the channel
 * unavailable rather than sending garbage upstream.
 *
 * Cool-downs (health/cooldown.ts) are kept beside the rows, keyed by channel id, so a reload neither ends nor
 * extends one; a resting channel is unavailable until its time is up. A cool-down decided here is announced
 * (`channels.cooldown`) and one announced elsewhere is applied here, so every process rests the channel.
 */

import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { keyFingerprint } from '@turnpike/core/channels/key-ring-writes';
import {
  KeyStatus,
  type MultiKeyModeValue,
  parseChannelInfo,
  ringOf,
} from '@turnpike/core/channels/multi-key';
import { settingProxy } from '@turnpike/core/channels/upstream';
import type { SealedBox } from '@turnpike/core/crypto/sealed-box';
import type { Db } from '@turnpike/core/db/client';
import { type Channel, channels } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import type { EventBus } from '@turnpike/core/events/bus';
import type { LimitSet } from '@turnpike/core/options/rate-limits';
import { type CooldownTracker, createCooldownTracker } from '../health/cooldown.ts';
import { providerFor } from '../providers/registry.ts';
import { buildRoutingTable, type RoutingTable } from '../routing/pick.ts';
import { createKeyStates, type KeyStates, type RelayKey } from './key-state.ts';

/** A channel as the request path needs it: settings parsed once per reload. */
export interface RelayChannel {
  readonly id: number;
  readonly name: string;
  readonly type: number;
  /**
   * Opened key; undefined when it could not be opened. On a multi-key channel: the key this view carries (see
   * {@link ChannelCache.withKey}), or the first enabled key on the row as loaded.
   */
  readonly key: string | undefined;
  /** Whether the row holds several keys, each with its own state (docs/adr/0027). */
  readonly isMultiKey?: boolean;
  /** Every key of the channel (one for a single-key channel); empty when the key could not be opened. */
  readonly keys?: readonly RelayKey[];
  readonly multiKeyMode?: MultiKeyModeValue;
  /** The fingerprint of {@link key} on a view made for one call. */
  readonly keyFingerprint?: string;
  readonly baseUrl: string;
  /** The type's extra field (Azure's API version, Vertex's region, Cloudflare's account id). */
  readonly other: string;
  status: number;
  readonly autoBan: boolean;
  readonly modelMapping: Readonly<Record<string, string>>;
  readonly statusCodeMapping: Readonly<Record<string, string | number>> | undefined;
  readonly paramOverride: Readonly<Record<string, unknown>> | undefined;
  /** Extra request headers from `setting.headers`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly organization: string | undefined;
  /** `setting.proxy`: the outbound proxy (`http://`, `https://`, `socks5://`) every upstream call goes through. */
  readonly proxy?: string | undefined;
  /** `setting.force_format`: OpenAI chat answers and chunks are rewritten into the documented shape. */
  readonly forceFormat?: boolean;
  /** `setting.thinking_to_content`: reasoning is put into `content` inside `<think>…</think>`. */
  readonly thinkingToContent?: boolean;
  /** Requests per minute, tokens per minute and requests in flight on this channel (docs/adr/0028). */
  readonly limits?: LimitSet;
}

export interface ChannelCache {
  /** Loads every channel and builds the table; the relay calls it at boot. */
  load(): Promise<void>;
  readonly table: RoutingTable;
  get(id: number): RelayChannel | undefined;
  /** Enabled, with a usable key, and of a type the relay has an adapter for. */
  isAvailable(id: number): boolean;
  /** Marks a channel disabled in memory at once (the database write and the event follow). */
  markDisabled(id: number): void;
  /**
   * The channel as one call uses it: on a multi-key channel a view carrying one usable key (`preferred`, a
   * fingerprint, when it is usable), chosen by the channel's mode; undefined when no key is usable.
   */
  withKey(id: number, preferred?: string): RelayChannel | undefined;
  /** The live state of the keys of multi-key channels (rests, disables not yet reloaded). */
  readonly keyStates: KeyStates;
  /** The box that opens and seals channel keys (a key's state is written back with its ring). */
  readonly box: SealedBox;
  /** Failures counted toward cool-downs, and the channels resting now (see health/cooldown.ts). */
  readonly cooldown: CooldownTracker;
  /** Every known channel's health now, by id order: a read-only snapshot for metrics and diagnostics. */
  health(): ChannelHealth[];
  close(): void;
}

/**
 * What a channel's health gauge reports (snake_case: they become Prometheus label values). `cooling_down` wins
 * over `enabled` while the rest lasts.
 */
export type ChannelHealthState = 'enabled' | 'disabled' | 'auto_disabled' | 'cooling_down';

/** Shaped as the metrics' channel-state sample, so `observeChannelStates(() => cache.health())` needs no mapping. */
export interface ChannelHealth {
  readonly channelId: number;
  readonly name: string;
  readonly state: ChannelHealthState;
  /** End of the cool-down (epoch ms) when `state` is `cooling_down`. */
  readonly coolingUntil?: number;
}

const parseObject = (text: string | null): Record<string, unknown> | undefined => {
  if (!text || text.trim() === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

const stringEntries = (value: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string' && v !== '') out[k] = v;
  return out;
};

/**
 * A channel row as the request path needs it (settings parsed, key opened). Also used by the channel test of
 * the console API, so a test sends exactly what the relay would.
 */
export function toRelayChannel(row: Channel, box: SealedBox): RelayChannel {
  const setting = parseObject(row.setting);
  const opened = box.open(row.key);
  const info = parseChannelInfo(row.channelInfo);
  const ring = opened === undefined ? undefined : ringOf(row.type, opened, info);
  const keys: RelayKey[] = (ring?.keys ?? []).map((key, index) => ({
    index,
    key,
    fingerprint: keyFingerprint(key),
    status: ring?.states[index]?.status ?? 1,
  }));
  const firstKey = info.is_multi_key ? keys.find((k) => k.status === KeyStatus.Enabled)?.key : opened;
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    key: firstKey,
    isMultiKey: info.is_multi_key,
    keys,
    multiKeyMode: info.multi_key_mode,
    baseUrl: row.baseUrl,
    other: row.other,
    status: row.status,
    autoBan: row.autoBan === 1,
    modelMapping: stringEntries(parseObject(row.modelMapping)),
    statusCodeMapping: parseObject(row.statusCodeMapping) as Record<string, string | number> | undefined,
    paramOverride: parseObject(row.paramOverride),
    headers: stringEntries(setting?.headers),
    organization: row.openaiOrganization ?? undefined,
    proxy: settingProxy(setting),
    forceFormat: setting?.force_format === true,
    thinkingToContent: setting?.thinking_to_content === true,
    limits: { rpm: row.rpmLimit, tpm: row.tpmLimit, concurrency: row.concurrencyLimit },
  };
}

export function createChannelCache(options: {
  db: Db;
  bus: EventBus;
  cryptoSecret: string;
  /** Periodic safety reload; 0 turns it off. */
  resyncMs: number;
  onError?: (error: unknown) => void;
  /** The clock of cool-downs (tests); default `Date.now`. */
  now?: () => number;
}): ChannelCache {
  const box = createChannelKeyBox(options.cryptoSecret);
  const cooldown = createCooldownTracker(options.now ? { now: options.now } : {});
  const keyStates = createKeyStates(options.now ? { now: options.now } : {});
  const keyViews = new WeakMap<RelayChannel, Map<string, RelayChannel>>();
  const onError = options.onError ?? (() => {});
  let byId = new Map<number, RelayChannel>();
  let table: RoutingTable = new Map();
  let loading: Promise<void> | undefined;
  let next: Promise<void> | undefined;

  async function loadNow(): Promise<void> {
    const rows = await options.db.select().from(channels);
    const loaded = new Map<number, RelayChannel>();
    for (const row of rows) loaded.set(row.id, toRelayChannel(row, box));
    table = buildRoutingTable(
      rows.map((row) => ({
        id: row.id,
        group: row.group,
        models: row.models,
        priority: row.priority,
        weight: row.weight,
        isEnabled: row.status === ChannelStatus.Enabled,
      })),
    );
    byId = loaded;
    cooldown.prune((id) => loaded.has(id));
    keyStates.prune(
      (id, fingerprint) => loaded.get(id)?.keys?.find((k) => k.fingerprint === fingerprint)?.status,
      (id) => loaded.has(id),
    );
    startResync();
  }

  /**
   * A load that starts now, or right after the running one (which may have read the rows before the change that
   * asked for this): every caller while a load runs shares the one after it.
   */
  function load(): Promise<void> {
    if (!loading) {
      loading = loadNow().finally(() => {
        loading = undefined;
      });
      return loading;
    }
    next ??= loading
      .catch(() => {})
      .then(() => {
        next = undefined;
        return load();
      });
    return next;
  }

  const unsubscribe = options.bus.subscribe((event) => {
    if (event.type === 'channels.changed' || event.type === 'all.changed') return load().catch(onError);
    if (event.type === 'channels.cooldown') {
      if (event.key === undefined) cooldown.rest(event.id, event.until);
      else keyStates.rest(event.id, event.key, event.until);
    }
    return undefined;
  });
  // The periodic reload starts with the first load that succeeds: a cache whose first load failed (a process
  // starting while the database goes away, which builds its app again) is dropped and must not keep reloading.
  let resync: NodeJS.Timeout | undefined;
  let closed = false;
  const startResync = () => {
    if (resync || closed || !(options.resyncMs > 0)) return;
    resync = setInterval(() => load().catch(onError), options.resyncMs);
    resync.unref();
  };

  /**
   * When a multi-key channel whose usable keys all rest gets one back (the earliest end), or undefined when a key
   * is usable now (or none rests: every key is disabled, which the stored status says).
   */
  function keysRestUntil(channel: RelayChannel): number | undefined {
    if (!channel.isMultiKey || !channel.keys) return undefined;
    let earliest: number | undefined;
    for (const key of channel.keys) {
      if (key.status !== ChannelStatus.Enabled) continue;
      const until = keyStates.restingUntil(channel.id, key.fingerprint);
      if (until === undefined) {
        if (keyStates.isUsable(channel.id, key)) return undefined;
        continue;
      }
      earliest = earliest === undefined ? until : Math.min(earliest, until);
    }
    return earliest;
  }

  return {
    load,
    get table() {
      return table;
    },
    get: (id) => byId.get(id),
    isAvailable(id) {
      const channel = byId.get(id);
      return (
        channel !== undefined &&
        channel.status === ChannelStatus.Enabled &&
        channel.key !== undefined &&
        providerFor(channel.type) !== undefined &&
        !cooldown.isCoolingDown(id) &&
        (!channel.isMultiKey || (channel.keys ?? []).some((key) => keyStates.isUsable(id, key)))
      );
    },
    withKey(id, preferred) {
      const channel = byId.get(id);
      if (!channel?.isMultiKey) return channel;
      const key = keyStates.choose(id, channel.keys ?? [], channel.multiKeyMode ?? 'random', preferred);
      if (!key) return undefined;
      // One view per key per loaded row, so what hangs off a channel object (its redactor) is made once.
      let views = keyViews.get(channel);
      if (!views) {
        views = new Map();
        keyViews.set(channel, views);
      }
      let view = views.get(key.fingerprint);
      if (!view) {
        view = { ...channel, key: key.key, keyFingerprint: key.fingerprint };
        views.set(key.fingerprint, view);
      }
      return view;
    },
    keyStates,
    box,
    markDisabled(id) {
      const channel = byId.get(id);
      if (channel) channel.status = ChannelStatus.AutoDisabled;
    },
    cooldown,
    health() {
      const out: ChannelHealth[] = [];
      for (const channel of [...byId.values()].sort((a, b) => a.id - b.id)) {
        const { id: channelId, name } = channel;
        if (channel.status === ChannelStatus.AutoDisabled)
          out.push({ channelId, name, state: 'auto_disabled' });
        else if (channel.status !== ChannelStatus.Enabled) out.push({ channelId, name, state: 'disabled' });
        else {
          const until = cooldown.coolingUntil(channelId) ?? keysRestUntil(channel);
          out.push(
            until === undefined
              ? { channelId, name, state: 'enabled' }
              : { channelId, name, state: 'cooling_down', coolingUntil: until },
          );
        }
      }
      return out;
    },
    close() {
      closed = true;
      unsubscribe();
      clearInterval(resync);
    },
  };
}

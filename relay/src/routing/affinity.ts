/**
 * Session affinity (docs/adr/0027): a session's calls go to the channel and key that served its first call, so
 * the provider's prompt cache stays warm. The `ChannelAffinity` option says where a call names its session (a
 * header or a body field, on which paths); a binding is held in Redis when the relay has it (every relay sends a
 * session to the same place) and in memory otherwise (bounded, oldest first out), for `ttl_seconds` after the
 * session's last call.
 *
 * A binding is only a preference: a bound channel that is disabled, resting, gone, or no longer serves the model
 * (or a bound key that is off) is passed over at once and the call routed as usual; whatever serves it becomes the
 * new binding. Redis being slow or away never holds a call: a lookup that takes longer than
 * {@link LOOKUP_TIMEOUT_MS} counts as no binding.
 */

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AffinityRule, ChannelAffinity } from '@turnpike/core/channels/affinity-rules';
import type { Redis } from 'ioredis';
import type { SettlementContext } from '../books/settlement-context.ts';
import type { RelayRequest } from '../contract.ts';
import { type RoutingTable, tiersFor } from './pick.ts';

/** Where a session's calls go: a channel, and the key within it on a multi-key channel. */
export interface AffinityBinding {
  readonly channelId: number;
  /** The key's fingerprint (never the key). */
  readonly key?: string | undefined;
}

export interface AffinityStore {
  get(id: string): Promise<AffinityBinding | undefined>;
  set(id: string, binding: AffinityBinding, ttlMs: number): Promise<void>;
  delete(id: string): Promise<void>;
}

const LOOKUP_TIMEOUT_MS = 100;

const encode = (b: AffinityBinding) => (b.key ? `${b.channelId}:${b.key}` : String(b.channelId));
const decode = (text: string | null | undefined): AffinityBinding | undefined => {
  if (!text) return undefined;
  const colon = text.indexOf(':');
  const channelId = Number(colon === -1 ? text : text.slice(0, colon));
  if (!Number.isInteger(channelId) || channelId <= 0) return undefined;
  return colon === -1 ? { channelId } : { channelId, key: text.slice(colon + 1) };
};

/** Bindings in this process: at most `maxEntries()` (the oldest written goes first), each until its TTL. */
export function createMemoryAffinityStore(
  maxEntries: () => number,
  now: () => number = Date.now,
): AffinityStore {
  const entries = new Map<string, { value: string; until: number }>();
  return {
    async get(id) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      if (entry.until <= now()) {
        entries.delete(id);
        return undefined;
      }
      return decode(entry.value);
    },
    async set(id, binding, ttlMs) {
      entries.delete(id);
      entries.set(id, { value: encode(binding), until: now() + ttlMs });
      const limit = maxEntries();
      for (const oldest of entries.keys()) {
        if (entries.size <= limit) break;
        entries.delete(oldest);
      }
    },
    async delete(id) {
      entries.delete(id);
    },
  };
}

/** Bindings in Redis under `<prefix>affinity:<id>`, shared by every relay. */
export function createRedisAffinityStore(redis: Redis, prefix: string): AffinityStore {
  const keyOf = (id: string) => `${prefix}affinity:${id}`;
  return {
    async get(id) {
      return decode(await redis.get(keyOf(id)));
    },
    async set(id, binding, ttlMs) {
      await redis.set(keyOf(id), encode(binding), 'PX', ttlMs);
    },
    async delete(id) {
      await redis.del(keyOf(id));
    },
  };
}

const fieldOf = (body: unknown, path: readonly string[]): unknown => {
  let value = body;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
};

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/** A rule made ready to apply: its body field split into steps, its pattern compiled. */
interface ReadyRule {
  readonly name: string;
  readonly paths: readonly string[];
  readonly header: string | undefined;
  readonly field: readonly string[];
  readonly pattern: RegExp | undefined;
}

/**
 * The rules of each option value, made ready once: every call is checked against all of them (eight by default),
 * and the option's value is one object until it changes.
 */
const readyRules = new WeakMap<readonly AffinityRule[], readonly ReadyRule[]>();
function ready(rules: readonly AffinityRule[]): readonly ReadyRule[] {
  let made = readyRules.get(rules);
  if (!made) {
    made = rules.map((rule) => ({
      name: rule.name,
      paths: rule.paths,
      header: rule.header,
      field: (rule.body_field ?? '').split('.'),
      pattern: rule.pattern === undefined ? undefined : new RegExp(rule.pattern),
    }));
    readyRules.set(rules, made);
  }
  return made;
}

/** The session a call names by the first rule that finds one, or undefined. */
export function sessionOf(
  rules: readonly AffinityRule[],
  request: { readonly url: string; readonly headers: Record<string, string | string[] | undefined> },
  body: unknown,
): { readonly rule: string; readonly value: string } | undefined {
  const path = pathOf(request.url);
  for (const rule of ready(rules)) {
    if (!rule.paths.some((prefix) => path.startsWith(prefix))) continue;
    const raw = rule.header !== undefined ? request.headers[rule.header] : fieldOf(body, rule.field);
    const text = Array.isArray(raw) ? raw[0] : typeof raw === 'number' ? String(raw) : raw;
    if (typeof text !== 'string' || text.trim() === '') continue;
    if (rule.pattern === undefined) return { rule: rule.name, value: text.trim() };
    const match = rule.pattern.exec(text);
    const value = match?.[1] ?? (match && match.length === 1 ? match[0] : undefined);
    if (value) return { rule: rule.name, value };
  }
  return undefined;
}

/** Whether the channel is in one of the tiers serving the model for the group. */
export function servesRoute(table: RoutingTable, group: string, model: string, channelId: number): boolean {
  return tiersFor(table, group, model).some((tier) => tier.channelIds.includes(channelId));
}

/** What affinity reads of the relay's context: its settings, its channels and its metrics. */
type AffinityContext = Pick<SettlementContext, 'deps' | 'channels' | 'metrics'>;

const stores = new WeakMap<AffinityContext, AffinityStore>();

function storeOf(ctx: AffinityContext, settings: () => ChannelAffinity): AffinityStore {
  let store = stores.get(ctx);
  if (!store) {
    const { redis, config } = ctx.deps;
    store = redis
      ? createRedisAffinityStore(redis, config.redisKeyPrefix)
      : createMemoryAffinityStore(() => settings().max_entries);
    stores.set(ctx, store);
  }
  return store;
}

/** One call's session affinity: where to go first, and how to record where it went. */
export interface CallAffinity {
  /** The binding to try first, when it can serve now. */
  readonly preferred: AffinityBinding | undefined;
  /** Records that `channelId` (and key) answered the call; a changed place is a rebind. */
  served(channelId: number, key: string | undefined): void;
}

/**
 * The affinity of one call: its session's binding, checked against what can serve now (a binding that cannot is
 * dropped), or undefined when affinity is off or the call names no session. Costs one Redis GET with Redis.
 */
export async function affinityOf(
  ctx: AffinityContext,
  request: Pick<RelayRequest, 'url' | 'headers'>,
  body: unknown,
  scope: { readonly tokenId: number; readonly group: string; readonly model: string },
): Promise<CallAffinity | undefined> {
  const settings = ctx.deps.options.get('ChannelAffinity');
  if (!settings.enabled || settings.rules.length === 0) return undefined;
  const session = sessionOf(settings.rules, request, body);
  if (!session) return undefined;
  const store = storeOf(ctx, () => ctx.deps.options.get('ChannelAffinity'));
  // A session is the caller's own: another token naming the same session id never steers it.
  const id = createHash('sha256')
    .update(`${session.rule}\n${scope.tokenId}\n${scope.group}\n${scope.model}\n${session.value}`)
    .digest('base64url')
    .slice(0, 32);
  const giveUp = new AbortController();
  const bound = await Promise.race([
    store.get(id).catch(() => undefined),
    sleep(LOOKUP_TIMEOUT_MS, undefined, { signal: giveUp.signal }).catch(() => undefined),
  ]);
  giveUp.abort();
  const usable =
    bound !== undefined &&
    ctx.channels.isAvailable(bound.channelId) &&
    servesRoute(ctx.channels.table, scope.group, scope.model, bound.channelId) &&
    (bound.key === undefined || isKeyUsable(ctx, bound.channelId, bound.key));
  if (bound && !usable) void store.delete(id).catch(() => undefined);
  const ttlMs = settings.ttl_seconds * 1000;
  return {
    preferred: usable ? bound : undefined,
    served(channelId, key) {
      const same = usable && bound.channelId === channelId && bound.key === key;
      ctx.metrics.recordAffinity(same ? 'hit' : bound ? 'rebind' : 'miss');
      // Written on every served call, so the binding lives `ttl_seconds` after the session's last call.
      void store.set(id, { channelId, key }, ttlMs).catch(() => undefined);
    },
  };
}

function isKeyUsable(ctx: AffinityContext, channelId: number, fingerprint: string): boolean {
  const channel = ctx.channels.get(channelId);
  if (!channel?.isMultiKey) return true;
  const key = channel.keys?.find((k) => k.fingerprint === fingerprint);
  return key !== undefined && ctx.channels.keyStates.isUsable(channelId, key);
}

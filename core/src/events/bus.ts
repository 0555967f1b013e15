import { randomUUID } from 'node:crypto';
import { createRedisClient, reconnectSoon } from '../kv/redis-client.ts';

/**
 * What one process tells the others after it changed shared state; receivers reload what the event names.
 * Events carry ids and keys, never the data itself, so a lost or reordered event costs a reload, not a wrong value.
 */
export type GatewayEvent =
  | { type: 'options.changed'; keys: string[] }
  | { type: 'users.changed'; ids: number[] }
  | { type: 'tokens.changed'; ids: number[] }
  | { type: 'channels.changed'; ids: number[] }
  /**
   * A channel rests after repeated failures until `until` (epoch ms) in every process (health/cooldown); with
   * `key` (a key's fingerprint, never the key) only that key of a multi-key channel rests (ADR 0027).
   */
  | { type: 'channels.cooldown'; id: number; until: number; key?: string }
  /**
   * Changes may have been missed and which cannot be told (a subscription came back after more changes than the
   * bus keeps, or Redis came back empty): every cache reloads everything it holds.
   */
  | { type: 'all.changed' };

/**
 * A subscriber. When it returns a promise (a cache reload, say), the event counts as applied in this process only
 * once that promise settles: `publish` waits for it, so a write that answered success is already served here.
 */
export type EventHandler = (event: GatewayEvent) => unknown;

/** Told when this process has applied a config version: the version and when it was published (epoch ms). */
export type AppliedListener = (version: number, publishedAt: number) => void;

export interface EventBus {
  /**
   * Delivers to every subscriber in every process, this one included, and resolves once every subscriber of
   * this process has applied it. Resolves to the event's config version: a number that grows with every
   * publish across all processes (0 when it could not be numbered, e.g. Redis is away).
   */
  publish(event: GatewayEvent): Promise<number>;
  subscribe(handler: EventHandler): () => void;
  /** The highest config version this process has applied (every subscriber settled). */
  appliedVersion(): number;
  onApplied(listener: AppliedListener): () => void;
  close(): Promise<void>;
}

/** Calls every handler and waits for those that return a promise; a failing handler never stops the others. */
function createDispatcher() {
  const handlers = new Set<EventHandler>();
  const appliedListeners = new Set<AppliedListener>();
  let applied = 0;
  return {
    handlers,
    appliedListeners,
    applied: () => applied,
    async dispatch(event: GatewayEvent, version: number, publishedAt: number): Promise<void> {
      const waits: Promise<unknown>[] = [];
      for (const handler of [...handlers]) {
        try {
          const result = handler(event);
          if (result instanceof Promise) waits.push(result);
        } catch {
          // A subscriber's own failure is its to report; delivery goes on.
        }
      }
      if (waits.length > 0) await Promise.allSettled(waits);
      if (version > applied) {
        applied = version;
        for (const listener of appliedListeners) listener(version, publishedAt);
      }
    },
  };
}

function busOf(
  dispatcher: ReturnType<typeof createDispatcher>,
  publish: EventBus['publish'],
  close: () => Promise<void>,
): EventBus {
  return {
    publish,
    subscribe(handler) {
      dispatcher.handlers.add(handler);
      return () => dispatcher.handlers.delete(handler);
    },
    appliedVersion: dispatcher.applied,
    onApplied(listener) {
      dispatcher.appliedListeners.add(listener);
      return () => dispatcher.appliedListeners.delete(listener);
    },
    async close() {
      dispatcher.handlers.clear();
      dispatcher.appliedListeners.clear();
      await close();
    },
  };
}

/** In-process bus for the all-in-one server without Redis: versions count the publishes of this process. */
export function createMemoryBus(): EventBus {
  const dispatcher = createDispatcher();
  let version = 0;
  return busOf(
    dispatcher,
    async (event) => {
      version += 1;
      const mine = version;
      await dispatcher.dispatch(event, mine, Date.now());
      return mine;
    },
    async () => {},
  );
}

/**
 * Numbers the event, publishes it and keeps it in the log of recent changes, in one round trip:
 * `<version>|<published at>|<origin>|<event json>`. KEYS[1] the version counter, KEYS[2] the log (newest first);
 * ARGV[1] the pub/sub channel, ARGV[2] the rest of the message, ARGV[3] how many messages the log keeps.
 */
const PUBLISH_SCRIPT = `
local version = redis.call('INCR', KEYS[1])
local message = version .. '|' .. ARGV[2]
redis.call('PUBLISH', ARGV[1], message)
redis.call('LPUSH', KEYS[2], message)
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
return version`;

/** Changes kept in Redis for a subscription that comes back: about a minute of a busy console's writes. */
const LOG_LENGTH = 1_000;
/** Changes a process keeps while Redis is away, to publish once it answers; past it, one `all.changed`. */
const UNSENT_MAX = 1_000;

/**
 * Redis pub/sub bus: every replica hears every change within one network round trip, numbered by one shared
 * counter (`<prefix>config-version`), so a writer can tell which replicas have applied its change (presence).
 * Local subscribers are called directly on publish, so a process sees its own change even while Redis is away.
 *
 * Pub/sub forgets what it published while a subscriber was away, so nothing waits for the periodic reload after
 * an outage: every subscription that comes back compares the shared version with the last one this process heard
 * and applies what it missed from the log of recent changes (`<prefix>config-log`), or `all.changed` when the log
 * does not reach back far enough or Redis came back empty; and a change this process made while Redis was away is
 * published as soon as Redis answers again.
 */
export async function createRedisBus(url: string, keyPrefix = 'turnpike:'): Promise<EventBus> {
  const channel = `${keyPrefix}events`;
  const versionKey = `${keyPrefix}config-version`;
  const logKey = `${keyPrefix}config-log`;
  // Names the life of this Redis's data: a Redis that came back empty gets a new one, and its counter restarts.
  const epochKey = `${keyPrefix}config-epoch`;
  const origin = randomUUID();
  const dispatcher = createDispatcher();
  const publisher = createRedisClient(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: reconnectSoon,
  });
  // Subscribed again on every (re)connection below, so no command waits in the offline queue meanwhile.
  const subscriber = createRedisClient(url, {
    lazyConnect: true,
    autoResubscribe: false,
    retryStrategy: reconnectSoon,
  });
  // Connection errors are retried by ioredis; what was missed meanwhile is caught up on reconnection.
  publisher.on('error', () => {});
  subscriber.on('error', () => {});

  /** The version of the last message heard (or caught up to); undefined until the first subscription. */
  let heard: number | undefined;
  /** The epoch of Redis's data that `heard` belongs to. */
  let heardEpoch: string | undefined;
  let started = false;
  let closed = false;
  const send = (event: GatewayEvent, publishedAt: number): Promise<number> =>
    publisher
      .eval(
        PUBLISH_SCRIPT,
        2,
        versionKey,
        logKey,
        channel,
        `${publishedAt}|${origin}|${JSON.stringify(event)}`,
        LOG_LENGTH,
      )
      .then(Number);

  /** What this subscription missed since it last heard `from`, applied in order (see the function's TSDoc). */
  async function catchUp(from: number | undefined, fromEpoch: string | undefined): Promise<void> {
    const replies = await publisher
      .multi()
      .set(epochKey, randomUUID(), 'NX')
      .get(epochKey)
      .get(versionKey)
      .lrange(logKey, 0, LOG_LENGTH - 1)
      .exec();
    const failed = replies?.find(([error]) => error)?.[0];
    if (!replies || failed) throw failed ?? new Error('the catch-up read was discarded');
    const epoch = String(replies[1]?.[1]);
    const version = Number(replies[2]?.[1] ?? 0);
    const log = (replies[3]?.[1] ?? []) as string[];
    // A live message heard meanwhile is newer than anything caught up here.
    if (heard === from) heard = version;
    heardEpoch = epoch;
    // The first subscription of a process that is starting: its caches load after this, nothing was missed.
    if (from === undefined && !started) return;
    if (epoch !== fromEpoch) from = undefined;
    else if (version === from) return;
    const missed =
      from === undefined
        ? []
        : log
            .map(parseMessage)
            .filter((m) => m !== undefined && m.version > from && m.version <= version)
            .sort((a, b) => (a?.version ?? 0) - (b?.version ?? 0));
    // Every version in (from, current] is in the log: apply those made elsewhere. Otherwise (Redis came back empty:
    // a new epoch; the log was trimmed past them; or this process never heard a version) reload everything.
    if (from !== undefined && version > from && missed.length === version - from) {
      for (const m of missed)
        if (m && m.origin !== origin) await dispatcher.dispatch(m.event, m.version, m.publishedAt);
      return;
    }
    await dispatcher.dispatch({ type: 'all.changed' }, version, Date.now());
  }

  /** Catches up once subscribed, trying again while the subscription holds (the publisher may reconnect later). */
  async function catchUpWhileSubscribed(
    from: number | undefined,
    fromEpoch: string | undefined,
  ): Promise<void> {
    for (let attempt = 1; attempt <= 50 && !closed && subscriber.status === 'ready'; attempt += 1) {
      try {
        await catchUp(from, fromEpoch);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, reconnectSoon(attempt)));
      }
    }
  }

  let subscribed: Promise<unknown> | undefined;
  subscriber.on('ready', () => {
    const from = heard;
    const fromEpoch = heardEpoch;
    subscribed = subscriber
      .subscribe(channel)
      .then(() => catchUpWhileSubscribed(from, fromEpoch))
      .catch(() => {
        // The connection dropped again before the subscription: the next 'ready' subscribes and catches up.
      });
  });

  /** Changes made here while Redis was away, published once it answers (oldest first). */
  let unsent: { event: GatewayEvent; publishedAt: number }[] = [];
  let sending = false;
  async function sendUnsent(): Promise<void> {
    if (sending) return;
    sending = true;
    try {
      while (unsent.length > 0 && !closed) {
        const [first] = unsent;
        if (!first) break;
        await send(first.event, first.publishedAt);
        unsent.shift();
      }
    } catch {
      // Away again: the next 'ready' sends the rest.
    } finally {
      sending = false;
    }
  }
  publisher.on('ready', () => void sendUnsent());

  // A Redis that is away at start must not stop the process (ioredis keeps trying): publishes are numbered 0
  // and this process applies its own changes until Redis answers, as during any other Redis outage.
  await Promise.all([publisher.connect(), subscriber.connect()]).catch(() => {});
  await subscribed;
  started = true;
  subscriber.on('message', (_channel: string, message: string) => {
    const parsed = parseMessage(message);
    if (!parsed) return;
    heard = parsed.version;
    if (parsed.origin === origin) return;
    void dispatcher.dispatch(parsed.event, parsed.version, parsed.publishedAt);
  });
  return busOf(
    dispatcher,
    async (event) => {
      const publishedAt = Date.now();
      const version = await send(event, publishedAt).catch(() => {
        unsent =
          unsent.length < UNSENT_MAX
            ? [...unsent, { event, publishedAt }]
            : [{ event: { type: 'all.changed' }, publishedAt }];
        return 0;
      });
      await dispatcher.dispatch(event, version, publishedAt);
      return version;
    },
    async () => {
      closed = true;
      subscriber.disconnect();
      publisher.disconnect();
    },
  );
}

function parseMessage(
  message: string,
): { version: number; publishedAt: number; origin: string; event: GatewayEvent } | undefined {
  const parts = message.split('|');
  if (parts.length < 4) return undefined;
  const [version, publishedAt, origin] = parts;
  try {
    const event = JSON.parse(parts.slice(3).join('|')) as GatewayEvent;
    return { version: Number(version), publishedAt: Number(publishedAt), origin: origin ?? '', event };
  } catch {
    return undefined;
  }
}

export function createEventBus(options: {
  redisUrl?: string | undefined;
  keyPrefix?: string;
}): Promise<EventBus> {
  return options.redisUrl
    ? createRedisBus(options.redisUrl, options.keyPrefix)
    : Promise.resolve(createMemoryBus());
}

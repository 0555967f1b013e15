import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { reconnectSoon } from '../kv/redis-client.ts';

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
  | { type: 'channels.cooldown'; id: number; until: number; key?: string };

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
 * Numbers the event and publishes it in one round trip: `<version>|<published at>|<origin>|<event json>`.
 * KEYS[1] the version counter, ARGV[1] the pub/sub channel, ARGV[2] the rest of the message.
 */
const PUBLISH_SCRIPT = `
local version = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], version .. '|' .. ARGV[2])
return version`;

/**
 * Redis pub/sub bus: every replica hears every change within one network round trip, numbered by one shared
 * counter (`<prefix>config-version`), so a writer can tell which replicas have applied its change (presence).
 * Local subscribers are called directly on publish, so a process sees its own change even while Redis is away.
 */
export async function createRedisBus(url: string, keyPrefix = 'turnpike:'): Promise<EventBus> {
  const channel = `${keyPrefix}events`;
  const versionKey = `${keyPrefix}config-version`;
  const origin = randomUUID();
  const dispatcher = createDispatcher();
  const publisher = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: reconnectSoon,
  });
  // Subscribed again on every (re)connection below, so no command waits in the offline queue meanwhile.
  const subscriber = new Redis(url, {
    lazyConnect: true,
    autoResubscribe: false,
    retryStrategy: reconnectSoon,
  });
  // Connection errors are retried by ioredis; the periodic resync of each cache covers the gap.
  publisher.on('error', () => {});
  subscriber.on('error', () => {});
  let subscribed: Promise<unknown> | undefined;
  subscriber.on('ready', () => {
    subscribed = subscriber.subscribe(channel).catch(() => {
      // The connection dropped again before the subscription: the next 'ready' subscribes.
    });
  });
  // A Redis that is away at start must not stop the process (ioredis keeps trying): publishes are numbered 0
  // and this process applies its own changes until Redis answers, as during any other Redis outage.
  await Promise.all([publisher.connect(), subscriber.connect()]).catch(() => {});
  await subscribed;
  subscriber.on('message', (_channel: string, message: string) => {
    const parsed = parseMessage(message);
    if (!parsed || parsed.origin === origin) return;
    void dispatcher.dispatch(parsed.event, parsed.version, parsed.publishedAt);
  });
  return busOf(
    dispatcher,
    async (event) => {
      const publishedAt = Date.now();
      // A lost publish is covered by each cache's periodic resync; this process applies the change either way.
      const version = await publisher
        .eval(PUBLISH_SCRIPT, 1, versionKey, channel, `${publishedAt}|${origin}|${JSON.stringify(event)}`)
        .then(Number)
        .catch(() => 0);
      await dispatcher.dispatch(event, version, publishedAt);
      return version;
    },
    async () => {
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

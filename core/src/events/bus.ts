import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

/**
 * What one process tells the others after it changed shared state; receivers reload what the event names.
 * Events carry ids and keys, never the data itself, so a lost or reordered event costs a reload, not a wrong value.
 */
export type GatewayEvent =
  | { type: 'options.changed'; keys: string[] }
  | { type: 'users.changed'; ids: number[] }
  | { type: 'tokens.changed'; ids: number[] }
  | { type: 'channels.changed'; ids: number[] };

export type EventHandler = (event: GatewayEvent) => void;

export interface EventBus {
  /** Delivers to every subscriber in every process, this one included. */
  publish(event: GatewayEvent): Promise<void>;
  subscribe(handler: EventHandler): () => void;
  close(): Promise<void>;
}

/** In-process bus for the all-in-one server without Redis. */
export function createMemoryBus(): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(event) {
      emitter.emit('event', event);
    },
    subscribe(handler) {
      emitter.on('event', handler);
      return () => emitter.off('event', handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

interface Envelope {
  origin: string;
  event: GatewayEvent;
}

/**
 * Redis pub/sub bus: every replica hears every change within one network round trip. Local subscribers are called
 * directly on publish, so a process sees its own change even while Redis is briefly unreachable.
 */
export async function createRedisBus(url: string, keyPrefix = 'turnpike:'): Promise<EventBus> {
  const channel = `${keyPrefix}events`;
  const origin = randomUUID();
  const local = createMemoryBus();
  const publisher = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  const subscriber = new Redis(url, { lazyConnect: true });
  // Connection errors are retried by ioredis; the periodic resync of each cache covers the gap.
  publisher.on('error', () => {});
  subscriber.on('error', () => {});
  await Promise.all([publisher.connect(), subscriber.connect()]);
  await subscriber.subscribe(channel);
  subscriber.on('message', (_channel: string, message: string) => {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (envelope.origin !== origin) void local.publish(envelope.event);
  });
  return {
    async publish(event) {
      await local.publish(event);
      // A lost publish is covered by each cache's periodic resync; the local change has already been applied.
      await publisher.publish(channel, JSON.stringify({ origin, event } satisfies Envelope)).catch(() => 0);
    },
    subscribe: local.subscribe,
    async close() {
      await local.close();
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}

export function createEventBus(options: {
  redisUrl?: string | undefined;
  keyPrefix?: string;
}): Promise<EventBus> {
  return options.redisUrl
    ? createRedisBus(options.redisUrl, options.keyPrefix)
    : Promise.resolve(createMemoryBus());
}

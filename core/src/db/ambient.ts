/**
 * One transaction around code that does not know about it (docs/adr/0045): the console API runs every
 * administrative change and its audit row in one transaction without passing a transaction handle through every
 * service. `followAmbientTransaction` wraps the database every role is given: inside `inOneTransaction` its queries
 * go to that transaction, everywhere else to the database as before. A service's own `db.transaction(...)` inside
 * becomes a savepoint of it.
 *
 * Events published inside are held until the transaction has ended (`deferEventsInTransaction`): a cache in another
 * process that reloads on the event must read the committed change, not the value before it. When the transaction
 * rolls back the held events still go out: a cache of this process may have taken the change already (the option
 * store applies a value as it writes it), and the reload they cause puts back what the database holds.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventBus, GatewayEvent } from '../events/bus.ts';
import type { Db, Tx } from './client.ts';

interface Scope {
  readonly tx: Tx;
  readonly events: GatewayEvent[];
}

const scopes = new AsyncLocalStorage<Scope>();

/** Whether the caller runs inside `inOneTransaction`. */
export function isInAmbientTransaction(): boolean {
  return scopes.getStore() !== undefined;
}

/**
 * The database as code that may run inside `inOneTransaction` should hold it: a query made inside goes to that
 * transaction, any other to `db`. Costs one lookup per property read outside a transaction.
 */
export function followAmbientTransaction(db: Db): Db {
  return new Proxy(db, {
    get(target, property) {
      const base: object = scopes.getStore()?.tx ?? target;
      const value: unknown = Reflect.get(base, property, base);
      return typeof value === 'function' ? value.bind(base) : value;
    },
  });
}

/** The bus as code inside `inOneTransaction` should publish on: held until the transaction has ended. */
export function deferEventsInTransaction(bus: EventBus): EventBus {
  return {
    ...bus,
    publish(event) {
      const scope = scopes.getStore();
      if (!scope) return bus.publish(event);
      scope.events.push(event);
      // Not numbered yet: it goes out when the transaction ends (0 is the bus's "could not be numbered").
      return Promise.resolve(0);
    },
  };
}

/**
 * Publishes what a transaction held, each event once even when named twice, and waits for this process; answers
 * the highest config version they went out under (0: none, or not numbered).
 */
async function publishHeld(bus: EventBus, events: readonly GatewayEvent[]): Promise<number> {
  const seen = new Set<string>();
  let version = 0;
  for (const event of events) {
    const text = JSON.stringify(event);
    if (seen.has(text)) continue;
    seen.add(text);
    version = Math.max(version, await bus.publish(event).catch(() => 0));
  }
  return version;
}

/**
 * Runs `run` in one transaction of `db` (a database from `followAmbientTransaction`): every query it makes through
 * such a database is part of it, and it commits only when `run` resolves. Events `run` published go out once it
 * has ended, committed or not; `onPublished` is told the config version they went out under (a writer whose
 * caller waits for the relays to apply a change needs it). Inside another `inOneTransaction`, `run` joins it.
 */
export async function inOneTransaction<T>(
  db: Db,
  bus: EventBus,
  run: () => Promise<T>,
  onPublished?: (version: number) => void,
): Promise<T> {
  if (scopes.getStore()) return run();
  const events: GatewayEvent[] = [];
  try {
    return await db.transaction((tx) => scopes.run({ tx, events }, run));
  } finally {
    // Outside the scope: the subscribers' reloads read the database as it now is.
    const version = await publishHeld(bus, events);
    onPublished?.(version);
  }
}

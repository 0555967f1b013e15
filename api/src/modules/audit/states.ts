/**
 * How the console API's audit reads the state of what a route changes (docs/adr/0045): core's readers
 * (core/src/audit/states.ts) on the change's transaction, and options as the option cache serves them.
 */
import {
  channelState as channelOf,
  contentLogSwitchState as contentLogSwitchOf,
  redemptionState as redemptionOf,
  type StateOf,
  userState as userOf,
} from '@turnpike/core/audit/states';
import { subscriptionPlans, userSubscriptions } from '@turnpike/core/db/schema/index';
import { isOptionKey } from '@turnpike/core/options/registry';
import { eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** Reads the state of one thing by id; undefined when it does not exist. */
export type StateReader = (deps: AppDeps) => StateOf;

export const channelState: StateReader = (deps) => channelOf(deps.db);
export const userState: StateReader = (deps) => userOf(deps.db);
export const redemptionState: StateReader = (deps) => redemptionOf(deps.db);
export const contentLogSwitchState: StateReader = (deps) => contentLogSwitchOf(deps.db);

/** An option as served (a price map with the entries resources own laid over it), under its own key. */
export const optionState: StateReader = (deps) => async (key) =>
  isOptionKey(key) ? { [key]: deps.options.get(key) } : undefined;

/** Reads one row of a table keyed by a numeric id (plans and users' subscriptions, docs/adr/0049). */
const rowOf =
  (read: (deps: AppDeps, id: number) => Promise<unknown>): StateReader =>
  (deps) =>
  async (id) =>
    /^\d{1,10}$/.test(id) ? read(deps, Number(id)) : undefined;

export const planState = rowOf(
  async (deps, id) =>
    (await deps.db.select().from(subscriptionPlans).where(eq(subscriptionPlans.id, id)).limit(1))[0],
);
export const subscriptionState = rowOf(
  async (deps, id) =>
    (await deps.db.select().from(userSubscriptions).where(eq(userSubscriptions.id, id)).limit(1))[0],
);

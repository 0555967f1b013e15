/**
 * The in-memory routing table (group → model → priority tiers → channels) and the channel choice for one
 * attempt of a request. See docs/adr/0007-weighted-choice.md for the algorithm.
 *
 * The table is built from the enabled channels (their `group` and `models` lists) and rebuilt on every channel
 * change event; a channel's live state (disabled a moment ago, cooling down) is not baked in but asked for at
 * pick time through `isAvailable`, so a channel switched off is never picked again, even before the rebuild.
 */

/** What the table needs to know about a channel. */
export interface RoutableChannel {
  readonly id: number;
  /** Comma-separated groups (`default,vip`). */
  readonly group: string;
  /** Comma-separated model names. */
  readonly models: string;
  /** Higher is tried first; null counts as 0. */
  readonly priority: number | null;
  /** Relative share of traffic within a tier; null counts as 0. */
  readonly weight: number | null;
  /** Only enabled channels are put in the table. */
  readonly isEnabled: boolean;
}

/** One priority level of one (group, model): its channels and their round-robin state. */
export interface Tier {
  readonly priority: number;
  readonly channelIds: readonly number[];
  /** Effective weights (see {@link effectiveWeight}), parallel to `channelIds`. */
  readonly weights: readonly number[];
  /** Smooth weighted round-robin state, parallel to `channelIds`. Mutated by {@link pickChannel}. */
  readonly current: Float64Array;
}

/** group → model → tiers, highest priority first. */
export type RoutingTable = ReadonlyMap<string, ReadonlyMap<string, readonly Tier[]>>;

/**
 * The reference adds 10 to every weight, so a weight-0 channel still gets some traffic and 100 vs 0 splits about
 * 91 / 9; kept so an installation moving over sees the same shares.
 */
export const WEIGHT_SMOOTHING = 10;

export const effectiveWeight = (weight: number | null): number =>
  Math.max(0, Math.floor(weight ?? 0)) + WEIGHT_SMOOTHING;

const splitList = (csv: string): string[] =>
  csv
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** Custom GPT names share one route (`gpt-4-gizmo-*`), as they share one price. */
export function routeModelName(model: string): string {
  if (model.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  if (model.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  return model;
}

/**
 * Builds the table. Each tier's round-robin state starts at a random point (`random` in [0, 1)), so relay
 * processes started together do not all send their first requests to the same channel.
 */
export function buildRoutingTable(
  channels: Iterable<RoutableChannel>,
  random: () => number = Math.random,
): RoutingTable {
  // group → model → priority → channels
  const grouped = new Map<string, Map<string, Map<number, RoutableChannel[]>>>();
  for (const channel of channels) {
    if (!channel.isEnabled) continue;
    const priority = channel.priority ?? 0;
    for (const group of new Set(splitList(channel.group))) {
      const models = grouped.get(group) ?? new Map<string, Map<number, RoutableChannel[]>>();
      grouped.set(group, models);
      for (const model of new Set(splitList(channel.models))) {
        const tiers = models.get(model) ?? new Map<number, RoutableChannel[]>();
        models.set(model, tiers);
        const list = tiers.get(priority) ?? [];
        tiers.set(priority, list);
        list.push(channel);
      }
    }
  }
  const table = new Map<string, Map<string, Tier[]>>();
  for (const [group, models] of grouped) {
    const byModel = new Map<string, Tier[]>();
    for (const [model, tiers] of models) {
      const sorted = [...tiers.entries()].sort((a, b) => b[0] - a[0]);
      byModel.set(
        model,
        sorted.map(([priority, list]) => {
          const ordered = [...list].sort((a, b) => a.id - b.id);
          const weights = ordered.map((channel) => effectiveWeight(channel.weight));
          const total = weights.reduce((sum, w) => sum + w, 0);
          const current = new Float64Array(weights.length);
          for (let i = 0; i < current.length; i += 1) current[i] = Math.floor(random() * total);
          return { priority, channelIds: ordered.map((channel) => channel.id), weights, current };
        }),
      );
    }
    table.set(group, byModel);
  }
  return table;
}

/** The tiers serving a model in a group (empty when none). */
export function tiersFor(table: RoutingTable, group: string, model: string): readonly Tier[] {
  return table.get(group)?.get(routeModelName(model)) ?? [];
}

/**
 * Smooth weighted round-robin (as in nginx) over the candidates of a tier: every candidate's `current` grows by
 * its weight, the largest wins and pays back the candidates' total. Over any window each channel gets its share
 * to within one pick, with no bursts. Returns the index in the tier, or -1 when no candidate is left.
 */
export function pickInTier(tier: Tier, isCandidate: (channelId: number) => boolean): number {
  let best = -1;
  let total = 0;
  const { current, weights, channelIds } = tier;
  for (let i = 0; i < channelIds.length; i += 1) {
    if (!isCandidate(channelIds[i] as number)) continue;
    const weight = weights[i] as number;
    current[i] = (current[i] as number) + weight;
    total += weight;
    if (best === -1 || (current[i] as number) > (current[best] as number)) best = i;
  }
  if (best !== -1) current[best] = (current[best] as number) - total;
  return best;
}

export interface PickInput {
  readonly group: string;
  readonly model: string;
  /** 0 for the first attempt, n for the n-th retry. */
  readonly attempt: number;
  /** Channels already tried for this request: never picked again. */
  readonly tried: ReadonlySet<number>;
  /** The channel's live state: enabled now and not cooling down. */
  readonly isAvailable: (channelId: number) => boolean;
}

export interface PickResult {
  readonly channelId: number;
  readonly priority: number;
}

/**
 * Picks the channel for one attempt. The first attempt uses the highest tier; retry n starts at tier n (clamped
 * to the lowest), as in the reference, so retries walk down the priorities. A tier with no untried, available
 * channel is skipped: lower tiers first, then the higher ones not exhausted yet, so a request fails only when
 * every channel serving the model has been tried or is unavailable. Returns undefined in that case.
 */
export function pickChannel(table: RoutingTable, input: PickInput): PickResult | undefined {
  const tiers = tiersFor(table, input.group, input.model);
  if (tiers.length === 0) return undefined;
  const start = Math.min(Math.max(input.attempt, 0), tiers.length - 1);
  const order = [...tiers.slice(start), ...tiers.slice(0, start).reverse()];
  const isCandidate = (id: number) => !input.tried.has(id) && input.isAvailable(id);
  for (const tier of order) {
    const index = pickInTier(tier, isCandidate);
    if (index !== -1) return { channelId: tier.channelIds[index] as number, priority: tier.priority };
  }
  return undefined;
}

/** Models a group can use (for `/v1/models`), sorted. */
export function modelsOfGroup(table: RoutingTable, group: string): string[] {
  return [...(table.get(group)?.keys() ?? [])].sort();
}

import {
  entryForModel,
  type LongContextTiers,
  type RequestFees,
  type ServiceTierRatio,
} from '@turnpike/core/billing/price-shapes';
import { buildPricing } from '@turnpike/core/billing/pricing';
import {
  isPricingRefusal,
  lookupGroupEntry,
  lookupGroupRatio,
  type PriceTables,
  type Pricing,
  priceModelName,
  resolvePricing,
} from '@turnpike/core/billing/ratios';
import type { PricingResponse, PricingShapes } from '@turnpike/core/contracts/pricing';
import { abilities, channels } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { usableGroups } from '@turnpike/core/domain/groups';
import { priceTablesOf } from '@turnpike/core/options/price-tables';
import { carriedBy } from '@turnpike/core/providers/catalogue';
import { eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** The group a visitor is shown prices for (spec 03: "a visitor sees the pricing with the default group ratio"). */
const VISITOR_GROUP = 'default';

/** The price maps `buildPricing` reads, as one group pays them. */
interface GroupView {
  readonly modelRatio: Record<string, number>;
  readonly completionRatio: Record<string, number>;
  readonly modelPrice: Record<string, number>;
  /** The ratio to answer for the group in `group_ratio`. */
  readonly shownRatio: number;
  /** What each model's row adds to the reference's fields. */
  readonly shapes: Record<string, PricingShapes>;
}

/** The price-shape options, as the relay reads them. */
interface ShapeTables {
  readonly longContext: LongContextTiers;
  readonly serviceTiers: ServiceTierRatio;
  readonly fees: RequestFees;
}

/** Whether a price map (or the group's own one) names the model: a price the operator or the built-in table set. */
function isListed(
  map: Readonly<Record<string, number>> | undefined,
  groupMap: Parameters<typeof lookupGroupEntry>[0],
  group: string,
  model: string,
): boolean {
  return (
    (map !== undefined && Object.hasOwn(map, priceModelName(model))) ||
    lookupGroupEntry(groupMap, group, model) !== undefined
  );
}

/** Anthropic's models: the only provider that bills cache writes by default (docs/adr/0041). */
const billsCacheWrites = (model: string) => /claude/i.test(model);

/**
 * The cache, tier and fee prices of one model, as the pricing page shows them. Cache reads are shown where the
 * model has a cache price, cache writes where one is set or the model is Claude's (every other provider's answers
 * carry no writes); fees are scaled like the model ratio, so `fee × group_ratio` is what the group pays.
 */
function shapesOf(
  pricing: Pricing,
  tables: PriceTables,
  shapes: ShapeTables,
  group: string,
  scale: (value: number) => number,
): PricingShapes {
  const out: PricingShapes = {};
  const { model } = pricing;
  const fees = entryForModel(shapes.fees, model);
  const feeEntries = Object.entries(fees ?? {}).filter(([, usd]) => usd !== undefined);
  if (feeEntries.length > 0)
    out.request_fees = Object.fromEntries(feeEntries.map(([kind, usd]) => [kind, scale(usd as number)]));
  if (pricing.kind === 'per-call') return out;
  const own = tables.groupPrices;
  if (isListed(tables.cacheRatio, own?.cacheRatio, group, model)) out.cache_ratio = pricing.cacheRatio;
  const claude = billsCacheWrites(model);
  if (claude || isListed(tables.cacheCreationRatio, own?.cacheCreationRatio, group, model))
    out.create_cache_ratio = pricing.cacheCreationRatio;
  if (claude || isListed(tables.cacheCreation1hRatio, own?.cacheCreation1hRatio, group, model))
    out.create_cache_1h_ratio = pricing.cacheCreation1hRatio;
  const tiers = entryForModel(shapes.longContext, model);
  if (tiers)
    out.long_context_tiers = [...tiers]
      .sort((a, b) => a.above - b.above)
      .map((tier) => ({
        above: tier.above,
        input: tier.input,
        output: tier.output,
        cache: tier.cache ?? tier.input,
      }));
  const serviceTiers = entryForModel(shapes.serviceTiers, model);
  if (serviceTiers && Object.keys(serviceTiers).length > 0) out.service_tier_ratio = { ...serviceTiers };
  return out;
}

/**
 * What each served model costs the caller's group, in the reference's fields. The response has one entry per
 * model and one ratio per group, and the console shows `model_ratio × group_ratio` (or `model_price × group_ratio`);
 * a group's own price (`GroupModelRatio`, `GroupModelPrice`, docs/adr/0017) is paid without the group ratio, so its
 * entry is divided by the group's ratio here, making that product what the caller pays. Prices are resolved as
 * billing resolves them (`resolvePricing`), so the completion ratio is the group's own one where it has one. A
 * group whose ratio is 0 but that pays its own price for some model is answered with ratio 1 and every other model
 * at 0, which again multiplies out to what it pays. Other groups' views stay on the un-grouped prices.
 */
function viewOfGroup(
  tables: PriceTables,
  shapes: ShapeTables,
  models: Iterable<string>,
  group: string,
  groupRatio: number,
): GroupView {
  const priced = [];
  for (const model of models) {
    const pricing = resolvePricing({
      tables,
      model,
      group,
      selfUseMode: false,
      acceptUnsetModelRatio: false,
    });
    // A model with no price is refused by billing, and not listed (as before group prices).
    if (!isPricingRefusal(pricing)) priced.push(pricing);
  }
  const shownRatio = groupRatio === 0 && priced.some((p) => p.groupRatio !== 0) ? 1 : groupRatio;
  const asShown = (value: number, paidRatio: number) =>
    paidRatio === shownRatio ? value : (value * paidRatio) / shownRatio;
  const view: GroupView = { modelRatio: {}, completionRatio: {}, modelPrice: {}, shownRatio, shapes: {} };
  for (const pricing of priced) {
    view.shapes[pricing.model] = shapesOf(pricing, tables, shapes, group, (usd) =>
      asShown(usd, pricing.groupRatio),
    );
    if (pricing.kind === 'per-call') {
      view.modelPrice[pricing.model] = asShown(pricing.modelPrice, pricing.groupRatio);
      continue;
    }
    view.modelRatio[pricing.model] = asShown(pricing.modelRatio, pricing.groupRatio);
    view.completionRatio[pricing.model] = pricing.completionRatio;
  }
  return view;
}

/** The public pricing page: every priced model, who serves it, and the caller's groups. */
export function createPricingService(deps: AppDeps) {
  /**
   * Model → groups with an enabled ability for it, in name order; and model → the groups in which a channel whose
   * provider runs a Batch API serves it (its batches are billed at the batch price there, docs/adr/0050).
   */
  async function servingGroups(): Promise<{
    serving: Map<string, string[]>;
    batch: Map<string, Set<string>>;
  }> {
    const rows = await deps.db
      .selectDistinct({ model: abilities.model, group: abilities.group, type: channels.type })
      .from(abilities)
      .leftJoin(channels, eq(channels.id, abilities.channelId))
      .where(eq(abilities.enabled, true))
      .orderBy(abilities.model, abilities.group);
    const serving = new Map<string, string[]>();
    const batch = new Map<string, Set<string>>();
    for (const row of rows) {
      const groups = serving.get(row.model);
      if (!groups) serving.set(row.model, [row.group]);
      else if (groups.at(-1) !== row.group) groups.push(row.group);
      if (row.type !== null && carriedBy(row.type).includes('batches'))
        batch.set(row.model, (batch.get(row.model) ?? new Set()).add(row.group));
    }
    return { serving, batch };
  }

  return {
    /**
     * For a visitor `user` is undefined: they see the selectable groups only, priced for the default group. A
     * signed-in user sees the prices their own group pays (see {@link viewOfGroup}).
     */
    async pricing(user: User | undefined): Promise<PricingResponse> {
      const tables = priceTablesOf((key) => deps.options.get(key));
      const usable = usableGroups(deps.options.get('UserUsableGroups'), tables.groupRatio, user?.group);
      const visible = Object.keys(usable);
      const group = user?.group ?? VISITOR_GROUP;
      const { serving, batch } = await servingGroups();
      const shapes: ShapeTables = {
        longContext: deps.options.get('LongContextTiers'),
        serviceTiers: deps.options.get('ServiceTierRatio'),
        fees: deps.options.get('RequestFees'),
      };
      const view = viewOfGroup(
        tables,
        shapes,
        serving.keys(),
        group,
        usable[group]?.ratio ?? lookupGroupRatio(tables, group),
      );
      const data = buildPricing({
        modelRatio: view.modelRatio,
        completionRatio: view.completionRatio,
        modelPrice: view.modelPrice,
        servingGroups: serving,
        visibleGroups: new Set(visible),
      });
      const ratioOf = (name: string) => (name === group ? view.shownRatio : (usable[name]?.ratio ?? 1));
      return {
        success: true,
        message: '',
        data: data.map((entry) => {
          const batchGroups = batch.get(entry.model_name);
          const takesBatches = batchGroups !== undefined && visible.some((name) => batchGroups.has(name));
          return {
            ...entry,
            ...view.shapes[entry.model_name],
            ...(takesBatches ? { batch_price: true } : {}),
          };
        }),
        group_ratio: Object.fromEntries(visible.map((name) => [name, ratioOf(name)])),
        usable_group: Object.fromEntries(visible.map((name) => [name, usable[name]?.desc ?? ''])),
      };
    },
  };
}

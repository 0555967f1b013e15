import { buildPricing } from '@turnpike/core/billing/pricing';
import {
  isPricingRefusal,
  lookupGroupRatio,
  type PriceTables,
  resolvePricing,
} from '@turnpike/core/billing/ratios';
import type { PricingResponse } from '@turnpike/core/contracts/pricing';
import { abilities } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { usableGroups } from '@turnpike/core/domain/groups';
import { priceTablesOf } from '@turnpike/core/options/price-tables';
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
  const view: GroupView = { modelRatio: {}, completionRatio: {}, modelPrice: {}, shownRatio };
  for (const pricing of priced) {
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
  /** Model → groups with an enabled ability for it, in name order. */
  async function servingGroups(): Promise<Map<string, string[]>> {
    const rows = await deps.db
      .selectDistinct({ model: abilities.model, group: abilities.group })
      .from(abilities)
      .where(eq(abilities.enabled, true))
      .orderBy(abilities.model, abilities.group);
    const map = new Map<string, string[]>();
    for (const row of rows) {
      const groups = map.get(row.model);
      if (groups) groups.push(row.group);
      else map.set(row.model, [row.group]);
    }
    return map;
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
      const serving = await servingGroups();
      const view = viewOfGroup(
        tables,
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
        data,
        group_ratio: Object.fromEntries(visible.map((name) => [name, ratioOf(name)])),
        usable_group: Object.fromEntries(visible.map((name) => [name, usable[name]?.desc ?? ''])),
      };
    },
  };
}

import { buildPricing } from '@turnpike/core/billing/pricing';
import type { PricingResponse } from '@turnpike/core/contracts/pricing';
import { abilities } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { usableGroups } from '@turnpike/core/domain/groups';
import { eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

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
    /** For a visitor `user` is undefined: they see the selectable groups only. */
    async pricing(user: User | undefined): Promise<PricingResponse> {
      const groupRatio = deps.options.get('GroupRatio');
      const usable = usableGroups(deps.options.get('UserUsableGroups'), groupRatio, user?.group);
      const visible = Object.keys(usable);
      const data = buildPricing({
        modelRatio: deps.options.get('ModelRatio'),
        completionRatio: deps.options.get('CompletionRatio'),
        modelPrice: deps.options.get('ModelPrice'),
        servingGroups: await servingGroups(),
        visibleGroups: new Set(visible),
      });
      return {
        success: true,
        message: '',
        data,
        group_ratio: Object.fromEntries(visible.map((group) => [group, usable[group]?.ratio ?? 1])),
        usable_group: Object.fromEntries(visible.map((group) => [group, usable[group]?.desc ?? ''])),
      };
    },
  };
}

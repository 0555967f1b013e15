import type { QuotaWindows, WindowOwner } from '@turnpike/core/billing/quota-windows';
import {
  type QuotaWindowStateView,
  toQuotaWindowStateView,
  type UserQuotaWindowsView,
} from '@turnpike/core/contracts/quota-windows';
import type { Token } from '@turnpike/core/db/schema/tokens';
import type { User } from '@turnpike/core/db/schema/users';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createQuotaWindowRepo } from '@turnpike/core/repos/quota-window.repo';
import type { AppDeps } from '../../deps.ts';

/**
 * What the windows of tokens and users have spent, as the console reads them (docs/adr/0043): read from
 * `quota_window_usage` at the API's clock, calendar windows in `QuotaWindowTimeZone`.
 */
export function createQuotaWindowService(deps: AppDeps) {
  const repo = createQuotaWindowRepo(deps.db);
  const now = deps.now ?? nowSeconds;

  async function statesOf(owner: WindowOwner, windows: QuotaWindows): Promise<QuotaWindowStateView[]> {
    if (windows.length === 0) return [];
    const states = await repo.statesOf(owner, windows, now(), deps.options.get('QuotaWindowTimeZone'));
    return states.map(toQuotaWindowStateView);
  }

  return {
    ofToken: (token: Token) => statesOf({ kind: 'token', id: token.id }, token.quotaWindows),

    /** The state of the user's own windows, and their group's windows with theirs. */
    async ofUser(user: User): Promise<UserQuotaWindowsView> {
      const byGroup = deps.options.get('GroupQuotaWindows');
      const groupWindows = Object.hasOwn(byGroup, user.group) ? (byGroup[user.group] ?? []) : [];
      const [own, ofGroup] = await Promise.all([
        statesOf({ kind: 'user', id: user.id }, user.quotaWindows),
        statesOf({ kind: 'group', group: user.group, userId: user.id }, groupWindows),
      ]);
      return {
        quota_window_states: own,
        group_quota_windows: groupWindows,
        group_quota_window_states: ofGroup,
      };
    },
  };
}

export type QuotaWindowService = ReturnType<typeof createQuotaWindowService>;

/** A group a user may route through, with its price multiplier and description. */
export interface UsableGroup {
  ratio: number;
  desc: string;
}

/**
 * The groups a user may pick for a token: the configured user-selectable groups plus the user's own group.
 * A visitor (no user group) sees the selectable groups only. Ratios default to 1 when a group has none.
 */
export function usableGroups(
  selectable: Record<string, string>,
  groupRatio: Record<string, number>,
  userGroup?: string,
): Record<string, UsableGroup> {
  const result: Record<string, UsableGroup> = {};
  for (const [group, desc] of Object.entries(selectable))
    result[group] = { ratio: groupRatio[group] ?? 1, desc };
  if (userGroup && !result[userGroup])
    result[userGroup] = { ratio: groupRatio[userGroup] ?? 1, desc: 'your group' };
  return result;
}

/**
 * The group limits editor's rules (docs/adr/0028): every user's default (`RateLimitUserDefault`) and each group's
 * entry (`RateLimitGroups`, replacing the default for the users of that group), as rows of three limit fields.
 */
import type { LimitSet } from '@turnpike/core/options/rate-limits';
import { type LimitTexts, limitTextsOf, parseLimitTexts } from '../../components/limit-fields.tsx';

/** The row of every user's default. */
export const DEFAULT_ROW = '';

export const parseObject = (text: string | undefined): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text ?? '');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
};

/** The rows: the default first, then every group the prices know or a limit names, in name order. */
export function groupLimitRows(values: Readonly<Record<string, string>>): [string, LimitTexts][] {
  const limits = parseObject(values.RateLimitGroups) as Record<string, LimitSet>;
  const groups = new Set([...Object.keys(parseObject(values.GroupRatio)), ...Object.keys(limits)]);
  return [
    [DEFAULT_ROW, limitTextsOf(parseObject(values.RateLimitUserDefault) as LimitSet)],
    ...[...groups].sort().map((group): [string, LimitTexts] => [group, limitTextsOf(limits[group])]),
  ];
}

/** A limit set without its zeros (no limit): what is stored. */
function compact(value: { rpm: number; tpm: number; concurrency: number }): LimitSet {
  return Object.fromEntries(Object.entries(value).filter(([, n]) => n > 0));
}

/**
 * The option texts of the rows, or the first row and field that is not a whole number of 0 or more. A group whose
 * limits are all blank has no entry (its users get the default).
 */
export function groupLimitOptions(
  rows: readonly (readonly [string, LimitTexts])[],
): { ok: true; userDefault: string; groups: string } | { ok: false; group: string; field: keyof LimitTexts } {
  let userDefault: LimitSet = {};
  const groups: Record<string, LimitSet> = {};
  for (const [group, texts] of rows) {
    const parsed = parseLimitTexts(texts);
    if (!parsed.ok) return { ok: false, group, field: parsed.field };
    const set = compact(parsed.value);
    if (group === DEFAULT_ROW) userDefault = set;
    else if (Object.keys(set).length > 0) groups[group] = set;
  }
  return { ok: true, userDefault: JSON.stringify(userDefault), groups: JSON.stringify(groups) };
}

/** Redemption code rules (spec 02 sections 4, 5 and 9); error answers are keys of the `redemptions` namespace. */

import { RedemptionStatus } from '@turnpike/core/domain/closed-sets';
import { formatQuota, type QuotaDisplay } from '../../lib/format.ts';

export { RedemptionStatus };
/** Mirror core's REDEMPTION_NAME_MAX and REDEMPTION_COUNT_MAX (checked by a test). */
export const REDEMPTION_NAME_MAX = 20;
export const REDEMPTION_COUNT_MAX = 100;
export const DEFAULT_REDEMPTION_QUOTA = 100_000;

export type RedemptionStatusName = 'unused' | 'disabled' | 'used' | 'unknown';

export function redemptionStatusName(status: number): RedemptionStatusName {
  if (status === RedemptionStatus.Unused) return 'unused';
  if (status === RedemptionStatus.Disabled) return 'disabled';
  if (status === RedemptionStatus.Used) return 'used';
  return 'unknown';
}

/** Only an unused code may be edited. */
export const canEdit = (status: number): boolean => status === RedemptionStatus.Unused;

/**
 * The status the enable/disable button switches to: an unused code offers Disable, a disabled one Enable;
 * a used code is final, so null (the button is blocked).
 */
export function toggleTarget(status: number): number | null {
  if (status === RedemptionStatus.Used) return null;
  return status === RedemptionStatus.Unused ? RedemptionStatus.Disabled : RedemptionStatus.Unused;
}

/** What the drawer holds, as typed. */
export interface RedemptionForm {
  name: string;
  quota: string;
  count: string;
}

export type RedemptionFormError =
  | 'error.nameRequired'
  | 'error.nameTooLong'
  | 'error.quotaPositive'
  | 'error.countRange';

export interface ParsedRedemptionForm {
  name: string;
  quota: number;
  count: number;
}

/**
 * Checks the drawer. quota and count are parsed as integers; on create a blank name becomes the formatted
 * quota, on edit the name is required. The count (create only) is a whole number from 1 to 100.
 */
export function parseRedemptionForm(
  form: RedemptionForm,
  isEdit: boolean,
  display: QuotaDisplay = {},
):
  | { ok: true; value: ParsedRedemptionForm }
  | { ok: false; field: keyof RedemptionForm; error: RedemptionFormError } {
  const quota = Number.parseInt(form.quota.trim(), 10);
  if (!/^\s*\d/.test(form.quota) || Number.isNaN(quota) || quota <= 0 || !Number.isSafeInteger(quota)) {
    return { ok: false, field: 'quota', error: 'error.quotaPositive' };
  }
  let name = form.name.trim();
  if (!name) {
    if (isEdit) return { ok: false, field: 'name', error: 'error.nameRequired' };
    name = formatQuota(quota, display).slice(0, REDEMPTION_NAME_MAX);
  }
  if (name.length > REDEMPTION_NAME_MAX) return { ok: false, field: 'name', error: 'error.nameTooLong' };
  let count = 1;
  if (!isEdit) {
    const text = form.count.trim();
    count = Number(text);
    if (!/^\d+$/.test(text) || count < 1 || count > REDEMPTION_COUNT_MAX) {
      return { ok: false, field: 'count', error: 'error.countRange' };
    }
  }
  return { ok: true, value: { name, quota, count } };
}

/** The text copied for selected codes: one `name    key` line each (the token page's format). */
export const copyText = (rows: readonly { name: string; key: string }[]): string =>
  rows.map((r) => `${r.name}    ${r.key}`).join('\n');

/** The .txt file offered after creating codes: one code per line, named after the codes' name. */
export function codesFile(name: string, keys: readonly string[]): { filename: string; text: string } {
  // characters that no file system accepts in a name, and line breaks or tabs, become an underscore
  const safe = name.replace(/[\\/:*?"<>|\t\n\r]/g, '_').trim() || 'redemption-codes';
  return { filename: `${safe}.txt`, text: `${keys.join('\n')}\n` };
}

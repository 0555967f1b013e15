/** Token form rules (spec 02 sections 4, 5 and 9). */

import { TokenStatus } from '@turnpike/core/domain/closed-sets';
import { type LimitTexts, parseLimitTexts } from '../../components/limit-fields.tsx';

export { TokenStatus };
export const NEVER_EXPIRES = -1;
export const DEFAULT_TOKEN_QUOTA = 500_000;
/** Expiry presets in seconds from now; `never` is -1. */
export const EXPIRY_PRESETS = { never: 0, hour: 3600, day: 86_400, month: 30 * 86_400 } as const;
export type ExpiryPreset = keyof typeof EXPIRY_PRESETS;
const SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export type TokenStatusName = 'enabled' | 'limited' | 'disabled' | 'expired' | 'exhausted' | 'unknown';

/** The status label: an enabled token with model limits reads 'limited models'. */
export function tokenStatusName(status: number, modelLimitsEnabled: boolean): TokenStatusName {
  if (status === TokenStatus.Enabled) return modelLimitsEnabled ? 'limited' : 'enabled';
  if (status === TokenStatus.Disabled) return 'disabled';
  if (status === TokenStatus.Expired) return 'expired';
  if (status === TokenStatus.Exhausted) return 'exhausted';
  return 'unknown';
}

/** Only an enabled token offers Disable; every other status offers Enable. */
export const toggleTarget = (status: number): number =>
  status === TokenStatus.Enabled ? TokenStatus.Disabled : TokenStatus.Enabled;

/** A random alphanumeric string from the platform CSPRNG. */
export function randomSuffix(length = 6): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

/** The names of a batch: the first keeps the name, the others get `-` and a random 6-character suffix. */
export function batchNames(name: string, count: number, suffix: () => string = randomSuffix): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? name : `${name}-${suffix()}`));
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Unix seconds to the "YYYY-MM-DD HH:mm:ss" text of the expiry field (local time). */
export function expiryText(seconds: number): string {
  if (seconds === NEVER_EXPIRES) return '';
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The expiry field text for a preset, counted from `now` (ms). */
export function presetExpiry(preset: ExpiryPreset, now = Date.now()): string {
  if (preset === 'never') return '';
  return expiryText(Math.floor(now / 1000) + EXPIRY_PRESETS[preset]);
}

/** Parses the expiry text: blank means never; otherwise it must be a date. */
export function parseExpiry(text: string): number | null {
  const trimmed = text.trim();
  if (!trimmed) return NEVER_EXPIRES;
  const ms = Date.parse(trimmed.replace(' ', 'T'));
  if (Number.isNaN(ms)) return null;
  return Math.floor(ms / 1000);
}

/** What the drawer holds, as typed. */
export interface TokenForm {
  name: string;
  remainQuota: string;
  unlimitedQuota: boolean;
  expiry: string;
  count: string;
  modelLimitsEnabled: boolean;
  modelLimits: string[];
  allowIps: string;
  group: string;
  /** Requests per minute, tokens per minute, requests at a time (docs/adr/0028); blank is no limit. */
  limits: LimitTexts;
}

/** The server refuses longer names. */
export const TOKEN_NAME_MAX = 30;
/** A dash and the random 6-character suffix extra tokens of a batch get. */
const BATCH_SUFFIX_LENGTH = 7;
/** The longest name a batch of more than one token may have. */
export const BATCH_NAME_MAX = TOKEN_NAME_MAX - BATCH_SUFFIX_LENGTH;

export type TokenFormError =
  | 'nameRequired'
  | 'expiryFormat'
  | 'quotaInteger'
  | 'countPositive'
  | 'nameTooLongForBatch'
  | 'limitInteger';

/** The message key of each form error (namespace `tokens`). */
export const TOKEN_ERROR_KEYS: Readonly<Record<TokenFormError, string>> = {
  nameRequired: 'error.nameRequired',
  expiryFormat: 'error.expiryFormat',
  quotaInteger: 'error.quotaInteger',
  countPositive: 'error.countPositive',
  nameTooLongForBatch: 'error.nameTooLongForBatch',
  limitInteger: 'error.limitInteger',
};

export interface ParsedTokenForm {
  fields: {
    name: string;
    remain_quota: number;
    expired_time: number;
    unlimited_quota: boolean;
    model_limits_enabled: boolean;
    model_limits: string;
    allow_ips: string;
    group: string;
    rpm_limit: number;
    tpm_limit: number;
    concurrency_limit: number;
  };
  count: number;
}

/** Checks the form; on success answers the request fields and the batch count (1 when editing). */
export function parseTokenForm(
  form: TokenForm,
  isEdit: boolean,
):
  | { ok: true; value: ParsedTokenForm }
  | { ok: false; field: keyof TokenForm | `limits.${keyof LimitTexts}`; error: TokenFormError } {
  const name = form.name.trim();
  if (!isEdit && !name) return { ok: false, field: 'name', error: 'nameRequired' };
  const expired = parseExpiry(form.expiry);
  if (expired === null) return { ok: false, field: 'expiry', error: 'expiryFormat' };
  const quota = Number.parseInt(form.remainQuota, 10);
  if (!form.unlimitedQuota && (Number.isNaN(quota) || quota < 0)) {
    return { ok: false, field: 'remainQuota', error: 'quotaInteger' };
  }
  let count = 1;
  if (!isEdit) {
    const text = form.count.trim();
    count = Number(text);
    if (!/^\d+$/.test(text) || count < 1) return { ok: false, field: 'count', error: 'countPositive' };
    // the extra tokens' names must still fit the server's limit once the suffix is added
    if (count > 1 && name.length > BATCH_NAME_MAX)
      return { ok: false, field: 'name', error: 'nameTooLongForBatch' };
  }
  const limits = parseLimitTexts(form.limits);
  if (!limits.ok) return { ok: false, field: `limits.${limits.field}`, error: 'limitInteger' };
  return {
    ok: true,
    value: {
      count,
      fields: {
        name,
        remain_quota: Number.isNaN(quota) ? 0 : quota,
        expired_time: expired,
        unlimited_quota: form.unlimitedQuota,
        model_limits_enabled: form.modelLimitsEnabled,
        model_limits: form.modelLimits.join(','),
        allow_ips: form.allowIps.trim(),
        group: form.group,
        rpm_limit: limits.value.rpm,
        tpm_limit: limits.value.tpm,
        concurrency_limit: limits.value.concurrency,
      },
    },
  };
}

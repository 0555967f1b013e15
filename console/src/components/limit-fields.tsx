/**
 * The three limit fields of the token form, the channel drawer and the group limits (docs/adr/0028): requests per
 * minute, tokens per minute, requests at a time; blank or 0 is no limit. Each form names them in its own words.
 */
import { MAX_LIMIT } from '@turnpike/core/options/limit-bound';
import { Input } from './ui/index.ts';

/** The fields as typed. */
export interface LimitTexts {
  rpm: string;
  tpm: string;
  concurrency: string;
}

/** The limits as the server takes them: whole numbers of 0 or more. */
export interface LimitValues {
  rpm: number;
  tpm: number;
  concurrency: number;
}

export const LIMIT_KEYS = ['rpm', 'tpm', 'concurrency'] as const;

/** The fields of stored limits: 0 (no limit) shows as blank. */
export function limitTextsOf(limits: Partial<LimitValues> | undefined): LimitTexts {
  const text = (n: number | undefined) => (n ? String(n) : '');
  return { rpm: text(limits?.rpm), tpm: text(limits?.tpm), concurrency: text(limits?.concurrency) };
}

/** The limits typed, or the first field that is not a whole number of 0 or more (up to the largest a column holds). */
export function parseLimitTexts(
  texts: LimitTexts,
): { ok: true; value: LimitValues } | { ok: false; field: keyof LimitTexts } {
  const value: LimitValues = { rpm: 0, tpm: 0, concurrency: 0 };
  for (const key of LIMIT_KEYS) {
    const text = texts[key].trim();
    if (text === '') continue;
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > MAX_LIMIT) return { ok: false, field: key };
    value[key] = n;
  }
  return { ok: true, value };
}

export interface LimitFieldsProps {
  value: LimitTexts;
  onChange(value: LimitTexts): void;
  /** The label of each field. */
  labels: Readonly<Record<keyof LimitTexts, string>>;
  /** Shown under the field that is wrong. */
  errors?: Partial<Record<keyof LimitTexts, string>>;
  /** Shown under the fields. */
  hint?: string;
  /** Prefix of the inputs' names (tests and autofill). */
  name: string;
}

export function LimitFields({ value, onChange, labels, errors, hint, name }: LimitFieldsProps) {
  return (
    <fieldset className="flex flex-col gap-1">
      <div className="grid grid-cols-1 gap-2 sm:grid-cols-3">
        {LIMIT_KEYS.map((key) => (
          <Input
            key={key}
            name={`${name}-${key}`}
            label={labels[key]}
            inputMode="numeric"
            placeholder="0"
            value={value[key]}
            error={errors?.[key]}
            onChange={(e) => onChange({ ...value, [key]: e.target.value })}
          />
        ))}
      </div>
      {hint ? <p className="text-xs text-gray-500 dark:text-gray-400">{hint}</p> : null}
    </fieldset>
  );
}

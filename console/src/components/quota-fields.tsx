/** The quota and count fields of the token and redemption-code forms, with their preset buttons. */
import type { ChangeEvent } from 'react';
import { formatQuota, type QuotaDisplay } from '../lib/format.ts';
import { PresetInput } from './ui/index.ts';

/** 1, 10, 50, 100, 500 and 1000 dollars at 500000 units per dollar. */
export const QUOTA_PRESETS = [500_000, 5_000_000, 25_000_000, 50_000_000, 250_000_000, 500_000_000] as const;
export const COUNT_PRESETS = [10, 20, 30, 100] as const;

interface FieldProps {
  label: string;
  value: string;
  error: string | undefined;
  onChange(value: string): void;
}

/** The props a numeric field with presets takes from its form field. */
const numericField = (field: FieldProps) => ({
  label: field.label,
  inputMode: 'numeric' as const,
  value: field.value,
  error: field.error,
  onChange: (e: ChangeEvent<HTMLInputElement>) => field.onChange(e.target.value),
  onPick: field.onChange,
});

/** Quota in units; the hint (`worth`) says what the typed amount is worth, the presets are in dollars. */
export function QuotaInput({
  display,
  worth,
  ...field
}: FieldProps & { display: QuotaDisplay; worth(money: string): string }) {
  const units = Number.parseInt(field.value, 10);
  return (
    <PresetInput
      {...numericField(field)}
      hint={Number.isNaN(units) ? undefined : worth(formatQuota(units, display))}
      presets={QUOTA_PRESETS.map((q) => ({
        value: String(q),
        label: formatQuota(q, { ...display, inCurrency: true }),
      }))}
    />
  );
}

/** How many to create at once. */
export function CountInput({ hint, ...field }: FieldProps & { hint: string }) {
  return (
    <PresetInput
      {...numericField(field)}
      hint={hint}
      presets={COUNT_PRESETS.map((n) => ({ value: String(n), label: n }))}
    />
  );
}

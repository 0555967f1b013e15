import { isValidJson, stripTrailingSlash, validateNumberField } from './validation.ts';

/** How a setting is edited. `secret` starts empty and is sent only when typed; `address` loses trailing slashes. */
export type FieldKind = 'switch' | 'text' | 'secret' | 'address' | 'number' | 'textarea' | 'json' | 'select';

export interface OptionField {
  key: string;
  /** Locale key (settings namespace) of the label; defaults to `field.<key>`. */
  label?: string;
  kind: FieldKind;
  hint?: string;
  min?: number;
  max?: number;
  step?: number;
  integer?: boolean;
  options?: readonly { value: string; label: string }[];
  /** The field is disabled unless this switch is on. */
  enabledBy?: string;
  /** Ask before turning this switch off (locale key of the question). */
  confirmOff?: string;
  /**
   * A check beyond the kind's, answering what is wrong in words already written (the option registry's, as the
   * server would answer them), or undefined.
   */
  check?: (text: string) => string | undefined;
}

export type Draft = Record<string, string>;

/** JSON text pretty-printed with two spaces (spec 02 section 3); text that is not JSON is left as it is. */
export function prettyJson(text: string): string {
  if (text.trim() === '') return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The form's starting values: the stored text (JSON pretty-printed), secrets empty. */
export function initialDraft(fields: readonly OptionField[], values: Record<string, string>): Draft {
  return Object.fromEntries(
    fields.map((f) => {
      const stored = values[f.key] ?? '';
      return [f.key, f.kind === 'secret' ? '' : f.kind === 'json' ? prettyJson(stored) : stored];
    }),
  );
}

/** Two JSON texts that parse to the same value are the same setting, however they are laid out. */
function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return a === b;
  }
}

/** The value as it will be saved. */
export function normalise(field: OptionField, value: string): string {
  if (field.kind === 'address') return stripTrailingSlash(value);
  if (field.kind === 'switch') return value === 'true' ? 'true' : 'false';
  if (field.kind === 'number') return value.trim();
  return value;
}

/** Only changed options are sent; secrets only when non-empty. */
export function changedEntries(
  fields: readonly OptionField[],
  values: Record<string, string>,
  draft: Draft,
): [string, string][] {
  const out: [string, string][] = [];
  for (const field of fields) {
    const next = normalise(field, draft[field.key] ?? '');
    if (field.kind === 'secret') {
      if (next !== '') out.push([field.key, next]);
      continue;
    }
    const before =
      field.kind === 'switch' ? normalise(field, values[field.key] ?? '') : (values[field.key] ?? '');
    if (field.kind === 'json' ? !sameJson(next, before) : next !== before) out.push([field.key, next]);
  }
  return out;
}

/** The problem with one field's value (locale key), or null. */
export function fieldError(field: OptionField, value: string): string | null {
  if (field.kind === 'json') return isValidJson(value) ? null : 'validation.json';
  if (field.kind === 'number') {
    return validateNumberField(value, {
      ...(field.min !== undefined ? { min: field.min } : {}),
      ...(field.max !== undefined ? { max: field.max } : {}),
      ...(field.integer !== undefined ? { integer: field.integer } : {}),
    });
  }
  return null;
}

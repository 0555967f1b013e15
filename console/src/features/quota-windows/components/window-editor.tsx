/**
 * The editor of a token's, a user's or a group's quota windows: what each counts (spending or requests), over
 * which period, up to which limit; with what a stored window has spent, and a question before a window that has
 * spent something is removed.
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConfirm } from '../../../components/data-table/index.ts';
import { Button, Input, Select } from '../../../components/ui/index.ts';
import type { QuotaDisplay } from '../../../lib/format.ts';
import {
  isTypedInMoney,
  MAX_WINDOWS,
  newWindowRow,
  parseWindowRows,
  type QuotaWindow,
  type QuotaWindowStateView,
  stateOf,
  WINDOW_ERROR_KEYS,
  WINDOW_PERIODS,
  type WindowPeriod,
  type WindowRow,
  windowAmount,
  windowRowsOf,
  windowsChanged,
} from '../rules.ts';
import { useResetText } from './window-states.tsx';

/** A problem to show under one field of one row. */
export interface WindowFieldError {
  index: number;
  field: 'limit' | 'hours';
  message: string;
}

export interface QuotaWindowEditorProps {
  rows: readonly WindowRow[];
  onChange(rows: WindowRow[]): void;
  display: QuotaDisplay;
  /** What the stored windows have spent (a token's or a user's; a group's windows have none of their own). */
  states?: readonly QuotaWindowStateView[] | undefined;
  error?: WindowFieldError | null | undefined;
  /** The legend; the editor's own title when absent. */
  title?: string;
}

export function QuotaWindowEditor({ rows, onChange, display, states, error, title }: QuotaWindowEditorProps) {
  const { t } = useTranslation('quota-windows');
  const confirm = useConfirm();
  const resetOf = useResetText();
  const update = (index: number, patch: Partial<WindowRow>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  const remove = (index: number) => onChange(rows.filter((_, i) => i !== index));
  const askRemove = (index: number, spent: QuotaWindowStateView | undefined) => {
    if (!spent || spent.used <= 0) {
      remove(index);
      return;
    }
    confirm.ask({
      danger: true,
      title: t('confirm.removeTitle'),
      message: t('confirm.removeMessage', { used: windowAmount(spent.unit, spent.used, display) }),
      confirmText: t('confirm.remove'),
      run: async () => remove(index),
    });
  };
  const limitLabel = (row: WindowRow) =>
    row.unit === 'requests'
      ? t('field.limitRequests')
      : isTypedInMoney(display)
        ? t('field.limitMoney')
        : t('field.limitQuota');

  return (
    <fieldset className="flex flex-col gap-2">
      <legend className="text-sm font-medium">{title ?? t('editor.title')}</legend>
      <p className="text-xs text-gray-500 dark:text-gray-400">{t('editor.hint')}</p>
      {rows.length === 0 ? (
        <p className="rounded bg-gray-50 p-2 text-sm text-gray-600 dark:bg-gray-800 dark:text-gray-300">
          {t('editor.empty')}
        </p>
      ) : null}
      {rows.map((row, index) => {
        const n = index + 1;
        // Only a window as stored has a state: one whose unit or period is being changed is another window.
        const state = stateOf(row, states);
        const fieldError = (field: 'limit' | 'hours') =>
          error?.index === index && error.field === field ? error.message : undefined;
        return (
          <fieldset
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own; order is the key
            key={index}
            aria-label={t('editor.row', { n })}
            className="flex flex-col gap-1 rounded border border-gray-200 p-2 dark:border-gray-700"
          >
            <div className="grid grid-cols-2 items-start gap-2 sm:grid-cols-[1fr_1fr_5rem_1fr_auto]">
              <Select
                label={t('field.unit')}
                value={row.unit}
                options={[
                  { value: 'quota', label: t('unit.quota') },
                  { value: 'requests', label: t('unit.requests') },
                ]}
                onChange={(e) => update(index, { unit: e.target.value as WindowRow['unit'] })}
              />
              <Select
                label={t('field.period')}
                value={row.period}
                options={WINDOW_PERIODS.map((p) => ({ value: p, label: t(`period.${p}`) }))}
                onChange={(e) => update(index, { period: e.target.value as WindowPeriod })}
              />
              {row.period === 'rolling' ? (
                <Input
                  label={t('field.hours')}
                  inputMode="numeric"
                  value={row.hours}
                  error={fieldError('hours')}
                  onChange={(e) => update(index, { hours: e.target.value })}
                />
              ) : (
                <span className="hidden sm:block" />
              )}
              <Input
                label={limitLabel(row)}
                inputMode="decimal"
                value={row.limit}
                error={fieldError('limit')}
                onChange={(e) => update(index, { limit: e.target.value })}
              />
              <Button
                variant="ghost"
                size="sm"
                className="self-end sm:mb-1.5"
                aria-label={t('editor.remove', { n })}
                onClick={() => askRemove(index, state)}
              >
                ✕
              </Button>
            </div>
            {state ? (
              <p className="text-xs text-gray-500 dark:text-gray-400">
                {t('state.usage', {
                  used: windowAmount(state.unit, state.used, display),
                  left: windowAmount(state.unit, state.left, display),
                })}
                {resetOf(state) ? ` · ${resetOf(state)}` : ''}
              </p>
            ) : null}
          </fieldset>
        );
      })}
      <div>
        <Button
          variant="secondary"
          size="sm"
          disabled={rows.length >= MAX_WINDOWS}
          title={rows.length >= MAX_WINDOWS ? t('editor.max', { max: MAX_WINDOWS }) : undefined}
          onClick={() => onChange([...rows, newWindowRow(display)])}
        >
          {t('editor.add')}
        </Button>
      </div>
      {confirm.dialog}
    </fieldset>
  );
}

/**
 * The windows field of a token's or a user's form: rows of the stored windows (once loaded, at the site's quota
 * display), the editor, and the check on submit, which marks the wrong field.
 */
export function useQuotaWindowsField(
  stored: readonly QuotaWindow[] | undefined,
  states: readonly QuotaWindowStateView[] | undefined,
  display: QuotaDisplay,
) {
  const { t } = useTranslation('quota-windows');
  const [rows, setRows] = useState<WindowRow[]>([]);
  const [error, setError] = useState<WindowFieldError | null>(null);
  const { quotaPerUnit, inCurrency } = display;
  useEffect(() => {
    if (stored) setRows(windowRowsOf(stored, { quotaPerUnit, inCurrency }));
  }, [stored, quotaPerUnit, inCurrency]);
  return {
    editor: (
      <QuotaWindowEditor
        rows={rows}
        onChange={(next) => {
          setRows(next);
          setError(null);
        }}
        display={display}
        states={states}
        error={error}
      />
    ),
    /** The windows typed and whether they differ from the stored ones, or why not (the field is marked). */
    check(): { ok: true; windows: QuotaWindow[]; changed: boolean } | { ok: false; message: string } {
      const parsed = parseWindowRows(rows, display);
      if (parsed.ok)
        return { ok: true, windows: parsed.windows, changed: windowsChanged(stored, parsed.windows) };
      const message = t(WINDOW_ERROR_KEYS[parsed.error]);
      setError({ index: parsed.index, field: parsed.field, message });
      return { ok: false, message };
    },
  };
}

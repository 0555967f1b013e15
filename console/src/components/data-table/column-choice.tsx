import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { readStoredJson, writeStored } from '../../lib/storage.ts';
import { Button, type ButtonVariant } from '../ui/button.tsx';
import { Modal } from '../ui/modal.tsx';

export interface ColumnChoiceOptions<C extends string> {
  /** Where the choice is remembered (local storage). */
  readonly storageKey: string;
  /** Every column of the table, in order. */
  readonly columns: readonly C[];
  /** Whether the viewer may see a column at all (admin-only columns); every column by default. */
  readonly allowed?: (column: C) => boolean;
  readonly title: string;
  readonly label: (column: C) => string;
  readonly resetLabel: string;
  readonly resetVariant?: ButtonVariant;
}

/** The columns the viewer may see, each on unless the remembered choice turned it off. */
export function storedColumns<C extends string>(
  storageKey: string,
  columns: readonly C[],
  allowed: (column: C) => boolean = () => true,
): Record<C, boolean> {
  const saved: Partial<Record<C, boolean>> = readStoredJson(storageKey) ?? {};
  return Object.fromEntries(columns.map((c) => [c, allowed(c) && saved[c] !== false])) as Record<C, boolean>;
}

/**
 * Which columns a table shows, remembered per browser, and the dialog that changes it: `open` shows the dialog,
 * `dialog` renders it (with the page's other sheets). Reset turns every column the viewer may see back on.
 */
export function useColumnChoice<C extends string>(options: ColumnChoiceOptions<C>) {
  const { storageKey, columns, allowed = () => true } = options;
  const [visible, setVisible] = useState(() => storedColumns(storageKey, columns, allowed));
  const [isOpen, setOpen] = useState(false);
  const save = (next: Record<C, boolean>) => {
    writeStored(storageKey, JSON.stringify(next));
    setVisible(next);
    setOpen(false);
  };
  return {
    visible,
    /** The columns shown, in order. */
    shown: columns.filter((c) => visible[c]),
    open: () => setOpen(true),
    dialog: isOpen ? (
      <ColumnChoiceDialog
        {...options}
        choices={columns.filter(allowed)}
        value={visible}
        onClose={() => setOpen(false)}
        onSave={save}
      />
    ) : null,
  };
}

function ColumnChoiceDialog<C extends string>({
  columns,
  choices,
  value,
  title,
  label,
  resetLabel,
  resetVariant = 'secondary',
  onClose,
  onSave,
}: ColumnChoiceOptions<C> & {
  choices: readonly C[];
  value: Record<C, boolean>;
  onClose: () => void;
  onSave: (next: Record<C, boolean>) => void;
}) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState(value);
  const reset = () =>
    setDraft(Object.fromEntries(columns.map((c) => [c, choices.includes(c)])) as Record<C, boolean>);
  return (
    <Modal
      open
      onClose={onClose}
      title={title}
      footer={
        <>
          <Button variant={resetVariant} onClick={reset}>
            {resetLabel}
          </Button>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button onClick={() => onSave(draft)}>{t('common:common.save')}</Button>
        </>
      }
    >
      <div className="grid grid-cols-2 gap-2">
        {choices.map((c) => (
          <label key={c} className="flex items-center gap-2">
            <input
              type="checkbox"
              checked={draft[c]}
              onChange={(e) => setDraft((d) => ({ ...d, [c]: e.target.checked }))}
            />
            {label(c)}
          </label>
        ))}
      </div>
    </Modal>
  );
}

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Modal, Select, Tag } from '../../../components/ui/index.ts';
import { formatThreshold, formatUsd } from '../../../lib/format.ts';
import { toast } from '../../../lib/toast.ts';
import { optionOwnersQuery, priceOwnerOf } from '../api/option-owners.ts';
import { type OptionValues, saveFailureText, saveOptions } from '../api/options.ts';
import {
  applyBatch,
  inputFromRow,
  optionsFromRows,
  type PriceRow,
  rowFromInput,
  rowShapeProblem,
  rowsFromOptions,
  sameJson,
} from '../pricing.ts';
import {
  type BatchMode,
  type PriceRowInput,
  parseNumber,
  ratioToTokenPrice,
  type TierInput,
  validateBatchSet,
  validatePriceRow,
} from '../validation.ts';

export const PRICING_PAGE_SIZE = 10;

const emptyInput: PriceRowInput = {
  name: '',
  price: '',
  ratio: '',
  completionRatio: '',
  longContext: [],
  serviceTiers: [],
  webSearch: '',
  image: '',
};
const emptyTier: TierInput = { above: '', input: '', output: '', cache: '' };

/** Searches per shown web-search price: providers publish it per 1,000 searches. */
const SEARCHES_PER_PRICE = 1000;

/**
 * A row's long-context tiers, service tiers and fees in a few words for the table: "above 200K ×2 / ×1.5",
 * "priority ×2", "web search $0.01 each".
 */
function ShapeSummary({ row }: { row: PriceRow }) {
  const { t } = useTranslation('settings');
  const parts = (row.longContext ?? []).map((tier) =>
    t('pricing.tierSummary', { tokens: formatThreshold(tier.above), input: tier.input, output: tier.output }),
  );
  for (const [tier, ratio] of Object.entries(row.serviceTiers ?? {}))
    parts.push(t('pricing.serviceTierSummary', { tier, ratio }));
  if (row.fees?.web_search !== undefined)
    parts.push(t('pricing.webSearchSummary', { price: formatUsd(row.fees.web_search) }));
  if (row.fees?.image !== undefined)
    parts.push(t('pricing.imageSummary', { price: formatUsd(row.fees.image) }));
  return parts.map((part) => <div key={part}>{part}</div>);
}

/** The dialog that adds or edits one model's price. */
export function PriceRowDialog({
  open,
  initial,
  editing,
  existing,
  onClose,
  onSubmit,
}: {
  open: boolean;
  initial: PriceRowInput;
  editing: string | null;
  existing: readonly string[];
  onClose: () => void;
  onSubmit: (row: PriceRow) => void;
}) {
  const { t } = useTranslation('settings');
  const [input, setInput] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const fixed = input.price.trim() !== '';
  const set =
    (k: 'name' | 'price' | 'ratio' | 'completionRatio' | 'webSearch' | 'image') =>
    (e: { target: { value: string } }) =>
      setInput((v) => ({ ...v, [k]: e.target.value }));
  const submit = () => {
    const problem = validatePriceRow(input, existing, editing);
    if (problem) {
      setError(t(problem));
      return;
    }
    // What the server would refuse (a multiplier of 0, two tiers at one threshold), in the registry's words.
    const row = rowFromInput(input);
    const refused = rowShapeProblem(row);
    setError(refused ?? null);
    if (!refused) onSubmit(row);
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={editing ? t('pricing.edit') : t('pricing.add')}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button onClick={submit}>{t('common:common.confirm')}</Button>
        </>
      }
    >
      <div className="flex flex-col gap-3">
        <Input label={t('pricing.name')} value={input.name} onChange={set('name')} />
        <Input
          label={t('pricing.price')}
          value={input.price}
          onChange={set('price')}
          hint={t('pricing.priceHint')}
        />
        <Input label={t('pricing.ratio')} value={input.ratio} onChange={set('ratio')} disabled={fixed} />
        <Input
          label={t('pricing.completionRatio')}
          value={input.completionRatio}
          onChange={set('completionRatio')}
          disabled={fixed}
        />
        <ShapeInputs input={input} setInput={setInput} fixed={fixed} />
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </Modal>
  );
}

/**
 * The price shapes of one model in the dialog: its long-context tiers (threshold and multipliers, the tier's USD
 * beside them), its service tiers (multipliers) and its fees (USD per search, per image). Tiers need per-token
 * prices, so a fixed price disables them.
 */
function ShapeInputs({
  input,
  setInput,
  fixed,
}: {
  input: PriceRowInput;
  setInput: (update: (v: PriceRowInput) => PriceRowInput) => void;
  fixed: boolean;
}) {
  const { t } = useTranslation('settings');
  const tiers = input.longContext ?? [];
  const serviceTiers = input.serviceTiers ?? [];
  const inputUsd = ratioToTokenPrice(parseNumber(input.ratio) ?? Number.NaN);
  const outputUsd = inputUsd * (parseNumber(input.completionRatio) ?? 1);
  const usd = (base: number, multiplier: string) => {
    const value = base * (parseNumber(multiplier) ?? Number.NaN);
    return Number.isFinite(value) ? formatUsd(value) : '-';
  };
  const webSearch = parseNumber(input.webSearch ?? '');
  const tierUsd = (inputMultiplier: string, outputMultiplier: string) =>
    t('pricing.tierUsd', { input: usd(inputUsd, inputMultiplier), output: usd(outputUsd, outputMultiplier) });
  return (
    <>
      <ListFieldset
        legend={t('pricing.longContext')}
        hint={t('pricing.longContextHint')}
        disabled={fixed}
        items={tiers}
        blank={emptyTier}
        gridClass="sm:grid-cols-5"
        fields={(tier, n) => [
          { key: 'above', label: t('pricing.tierAbove', { n }) },
          { key: 'input', label: t('pricing.tierInput', { n }) },
          { key: 'output', label: t('pricing.tierOutput', { n }) },
          { key: 'cache', label: t('pricing.tierCache', { n }), placeholder: tier.input },
        ]}
        note={(tier) => tierUsd(tier.input, tier.output)}
        removeLabel={(n) => t('pricing.tierRemove', { n })}
        addLabel={t('pricing.tierAdd')}
        onChange={(longContext) => setInput((v) => ({ ...v, longContext }))}
      />
      <ListFieldset
        legend={t('pricing.serviceTiers')}
        hint={t('pricing.serviceTiersHint')}
        disabled={fixed}
        items={serviceTiers}
        blank={{ tier: '', ratio: '' }}
        gridClass="sm:grid-cols-3"
        fields={(_, n) => [
          { key: 'tier', label: t('pricing.serviceTierName', { n }), placeholder: 'priority' },
          { key: 'ratio', label: t('pricing.serviceTierRatio', { n }) },
        ]}
        note={(tier) => tierUsd(tier.ratio, tier.ratio)}
        removeLabel={(n) => t('pricing.serviceTierRemove', { n })}
        addLabel={t('pricing.serviceTierAdd')}
        onChange={(next) => setInput((v) => ({ ...v, serviceTiers: next }))}
      />
      <div className="grid grid-cols-1 gap-2 sm:grid-cols-2">
        <Input
          label={t('pricing.webSearch')}
          value={input.webSearch ?? ''}
          onChange={(e) => setInput((v) => ({ ...v, webSearch: e.target.value }))}
          hint={
            webSearch !== null
              ? t('pricing.webSearchPer1k', { price: formatUsd(webSearch * SEARCHES_PER_PRICE) })
              : undefined
          }
        />
        <Input
          label={t('pricing.image')}
          value={input.image ?? ''}
          onChange={(e) => setInput((v) => ({ ...v, image: e.target.value }))}
        />
      </div>
    </>
  );
}

/**
 * A list of rows of text fields (long-context tiers, service tiers): each row with a remove button and a note
 * under it, and a button that adds a blank row. Rows are known by their place: none has a name until it is typed.
 */
function ListFieldset<T extends { [K in keyof T]: string }>({
  legend,
  hint,
  disabled,
  items,
  blank,
  gridClass,
  fields,
  note,
  removeLabel,
  addLabel,
  onChange,
}: {
  legend: string;
  hint: string;
  disabled: boolean;
  items: readonly T[];
  blank: T;
  gridClass: string;
  fields: (item: T, n: number) => { key: keyof T & string; label: string; placeholder?: string }[];
  note: (item: T) => string;
  removeLabel: (n: number) => string;
  addLabel: string;
  onChange: (items: T[]) => void;
}) {
  const change = (i: number, key: keyof T & string, value: string) =>
    onChange(items.map((item, j) => (j === i ? { ...item, [key]: value } : item)));
  return (
    <fieldset className="flex flex-col gap-2" disabled={disabled}>
      <legend className="text-sm font-medium">{legend}</legend>
      <p className="text-xs text-gray-500">{hint}</p>
      {items.map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a row has no name until it is typed
        <div key={i} className={`grid grid-cols-2 items-end gap-2 ${gridClass}`}>
          {fields(item, i + 1).map((field) => (
            <Input
              key={field.key}
              label={field.label}
              value={item[field.key]}
              placeholder={field.placeholder}
              onChange={(e) => change(i, field.key, e.target.value)}
            />
          ))}
          <Button size="sm" variant="ghost" onClick={() => onChange(items.filter((_, j) => j !== i))}>
            {removeLabel(i + 1)}
          </Button>
          <p className="col-span-full text-xs text-gray-500">{note(item)}</p>
        </div>
      ))}
      <Button size="sm" variant="secondary" onClick={() => onChange([...items, blank])}>
        {addLabel}
      </Button>
    </fieldset>
  );
}

/** The batch-set dialog: one value (or ratio and completion ratio) for every selected model. */
function BatchDialog({
  open,
  selected,
  onClose,
  onApply,
}: {
  open: boolean;
  selected: number;
  onClose: () => void;
  onApply: (mode: BatchMode, value: number, completion: number) => void;
}) {
  const { t } = useTranslation('settings');
  const [mode, setMode] = useState<BatchMode>('ratio');
  const [value, setValue] = useState('');
  const [completion, setCompletion] = useState('');
  const [error, setError] = useState<string | null>(null);
  const apply = () => {
    const problem = validateBatchSet(selected, mode, value, completion);
    setError(problem ? t(problem) : null);
    if (!problem) onApply(mode, parseNumber(value) ?? 0, parseNumber(completion) ?? 0);
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('pricing.batch')}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button onClick={apply}>{t('pricing.batchApply')}</Button>
        </>
      }
    >
      <div className="flex flex-col gap-3">
        <Select
          label={t('pricing.batchMode')}
          value={mode}
          onChange={(e) => setMode(e.target.value as BatchMode)}
          options={(['price', 'ratio', 'completion', 'both'] as const).map((m) => ({
            value: m,
            label: t(`pricing.mode.${m}`),
          }))}
        />
        <Input label={t('pricing.batchValue')} value={value} onChange={(e) => setValue(e.target.value)} />
        {mode === 'both' ? (
          <Input
            label={t('pricing.completionRatio')}
            value={completion}
            onChange={(e) => setCompletion(e.target.value)}
          />
        ) : null}
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </Modal>
  );
}

/** Visual pricing editor (spec 02 section 5): search, paged rows, add/edit/delete, batch set, save. */
export function PricingEditor({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [rows, setRows] = useState<PriceRow[]>(() => rowsFromOptions(values));
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<{ row: PriceRowInput; editing: string | null } | null>(null);
  const [batchOpen, setBatchOpen] = useState(false);
  const [saving, setSaving] = useState(false);
  // Prices a ModelPrice resource sets are Git's: shown with a badge, not editable here (the server refuses too).
  const owners = useQuery(optionOwnersQuery).data ?? [];

  const filtered = rows.filter((r) => r.name.toLowerCase().includes(search.trim().toLowerCase()));
  const pages = Math.max(1, Math.ceil(filtered.length / PRICING_PAGE_SIZE));
  const current = Math.min(page, pages);
  const visible = filtered.slice((current - 1) * PRICING_PAGE_SIZE, current * PRICING_PAGE_SIZE);

  const toggle = (name: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });

  const save = async () => {
    const next = optionsFromRows(rows, values);
    const changed = (Object.entries(next) as [string, string][]).filter(([k, v]) => !sameJson(values[k], v));
    if (changed.length === 0) {
      toast.info(t('save.nothingChanged'));
      return;
    }
    setSaving(true);
    const result = await saveOptions(changed);
    setSaving(false);
    if (result.failed.length === 0) toast.success(t('save.saved'));
    else toast.error(saveFailureText(result, t));
    await queryClient.invalidateQueries({ queryKey: ['options'] });
  };

  return (
    <section aria-label={t('ratioTab.visual')} className="flex flex-col gap-3">
      <div className="flex flex-wrap items-end gap-2">
        <Input
          label={t('pricing.search')}
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            setPage(1);
          }}
        />
        <Button variant="secondary" onClick={() => setDialog({ row: emptyInput, editing: null })}>
          {t('pricing.add')}
        </Button>
        <Button
          variant="secondary"
          onClick={() => {
            if (selected.size === 0) toast.error(t('pricing.batchNoSelection'));
            else setBatchOpen(true);
          }}
        >
          {t('pricing.batch')}
        </Button>
        <Button onClick={() => void save()} loading={saving}>
          {t('pricing.save')}
        </Button>
      </div>
      <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
        <table className="min-w-full text-sm">
          <thead className="bg-gray-50 dark:bg-gray-800">
            <tr>
              <th className="px-3 py-2" />
              <th className="px-3 py-2 text-left">{t('pricing.name')}</th>
              <th className="px-3 py-2 text-left">{t('pricing.price')}</th>
              <th className="px-3 py-2 text-left">{t('pricing.ratio')}</th>
              <th className="px-3 py-2 text-left">{t('pricing.completionRatio')}</th>
              <th className="px-3 py-2 text-left">{t('pricing.tokenPrice')}</th>
              <th className="px-3 py-2 text-left">{t('pricing.shapes')}</th>
              <th className="px-3 py-2" />
            </tr>
          </thead>
          <tbody>
            {visible.map((row) => {
              const owner = priceOwnerOf(owners, row.name);
              const readOnly = owner ? t('pricing.managedReadOnly') : undefined;
              return (
                <tr key={row.name} className="border-t border-gray-100 dark:border-gray-800">
                  <td className="px-3 py-2">
                    <input
                      type="checkbox"
                      aria-label={t('pricing.select', { name: row.name })}
                      checked={selected.has(row.name)}
                      disabled={owner !== undefined}
                      title={readOnly}
                      onChange={() => toggle(row.name)}
                    />
                  </td>
                  <td className="px-3 py-2">
                    {row.name}{' '}
                    {owner ? (
                      <Tag color="blue">
                        <span
                          title={t('pricing.managedTitle', {
                            resource: `${owner.kind} ${owner.namespace}/${owner.name}`,
                            generation: owner.generation,
                          })}
                        >
                          {t('pricing.managed')}
                        </span>
                      </Tag>
                    ) : null}
                  </td>
                  <td className="px-3 py-2">{row.price ?? '-'}</td>
                  <td className="px-3 py-2">{row.price === undefined ? (row.ratio ?? '-') : '-'}</td>
                  <td className="px-3 py-2">
                    {row.price === undefined ? (row.completionRatio ?? '-') : '-'}
                  </td>
                  <td className="px-3 py-2">
                    {row.price === undefined && row.ratio !== undefined
                      ? `${formatUsd(ratioToTokenPrice(row.ratio))} / ${formatUsd(ratioToTokenPrice(row.ratio) * (row.completionRatio ?? 1))}`
                      : '-'}
                  </td>
                  <td className="px-3 py-2 text-xs">
                    <ShapeSummary row={row} />
                  </td>
                  <td className="px-3 py-2">
                    <div className="flex gap-1">
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={owner !== undefined}
                        title={readOnly}
                        onClick={() => setDialog({ row: inputFromRow(row), editing: row.name })}
                      >
                        {t('pricing.editRow')}
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={owner !== undefined}
                        title={readOnly}
                        onClick={() => setRows((rs) => rs.filter((r) => r.name !== row.name))}
                      >
                        {t('pricing.delete')}
                      </Button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <nav className="flex items-center justify-end gap-2 text-sm">
        <button type="button" disabled={current <= 1} onClick={() => setPage(current - 1)}>
          {t('common:table.previous')}
        </button>
        <span>
          {current} / {pages}
        </span>
        <button type="button" disabled={current >= pages} onClick={() => setPage(current + 1)}>
          {t('common:table.next')}
        </button>
      </nav>
      {dialog ? (
        <PriceRowDialog
          open
          initial={dialog.row}
          editing={dialog.editing}
          existing={rows.map((r) => r.name)}
          onClose={() => setDialog(null)}
          onSubmit={(row) => {
            setRows((rs) =>
              [...rs.filter((r) => r.name !== dialog.editing && r.name !== row.name), row].sort((a, b) =>
                a.name.localeCompare(b.name),
              ),
            );
            setDialog(null);
          }}
        />
      ) : null}
      {batchOpen ? (
        <BatchDialog
          open
          selected={selected.size}
          onClose={() => setBatchOpen(false)}
          onApply={(mode, value, completion) => {
            setRows((rs) => applyBatch(rs, selected, mode, value, completion));
            setBatchOpen(false);
          }}
        />
      ) : null}
    </section>
  );
}

import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, EmptyState, Input, Modal, PageSpinner, Select, Tag } from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatThreshold, groupRatioColor } from '../../../lib/format.ts';
import { useSessionUser } from '../../../lib/session.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { type PricingEntry, pricingQuery } from '../api/pricing.ts';
import {
  BillingType,
  computeExtraPrices,
  computePrice,
  filterPricing,
  formatPrice,
  initialGroup,
  isAvailable,
  type PriceDisplay,
  ratioOf,
  selectedNames,
  sortPricing,
} from '../rules.ts';

/** The public pricing page: every model's price in the viewed group, searchable and copyable. */
export function PricingPage() {
  const { t } = useTranslation('pricing');
  const user = useSessionUser();
  const pricing = useQuery(pricingQuery(user?.id ?? 0));
  const display = useQuotaDisplay();
  const [search, setSearch] = useState('');
  /** The group chosen by the viewer; null until they choose, so the default follows the loaded data. */
  const [chosenGroup, setChosenGroup] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(() => new Set());
  const [ratioHelpOpen, setRatioHelpOpen] = useState(false);
  const { copy, dialog } = useCopy();

  const groupRatio = pricing.data?.groupRatio ?? {};
  const groupDesc = pricing.data?.groupDesc ?? {};
  const group = chosenGroup ?? initialGroup(groupRatio, user?.group);
  const sorted = useMemo(() => sortPricing(pricing.data?.models ?? []), [pricing.data]);
  const rows = useMemo(() => filterPricing(sorted, search), [sorted, search]);
  const allShownSelected = rows.length > 0 && rows.every((row) => selected.has(row.model_name));

  const switchGroup = (next: string) => {
    setChosenGroup(next);
    toast.info(t('group.switched', { group: next, ratio: ratioOf(groupRatio, next) }));
  };

  const toggle = (name: string) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });

  const toggleAllShown = () =>
    setSelected((prev) => {
      const next = new Set(prev);
      for (const row of rows) {
        if (allShownSelected) next.delete(row.model_name);
        else next.add(row.model_name);
      }
      return next;
    });

  const groupOptions = Object.keys(groupRatio).map((name) => ({
    value: name,
    label: `${name}${groupDesc[name] ? ` · ${groupDesc[name]}` : ''} (×${ratioOf(groupRatio, name)})`,
  }));

  return (
    <main className="mx-auto w-full max-w-6xl px-4 py-6">
      <h1 className="mb-4 text-xl font-semibold">{t('title')}</h1>

      {pricing.data ? (
        user ? (
          <p
            role="note"
            className="mb-3 rounded-md border border-green-200 bg-green-50 px-4 py-3 text-sm text-green-900 dark:border-green-900 dark:bg-green-950 dark:text-green-100"
          >
            {t('banner.user', {
              group: user.group || initialGroup(groupRatio),
              ratio: ratioOf(groupRatio, user.group || initialGroup(groupRatio)),
            })}
          </p>
        ) : (
          <p
            role="note"
            className="mb-3 rounded-md border border-yellow-200 bg-yellow-50 px-4 py-3 text-sm text-yellow-900 dark:border-yellow-900 dark:bg-yellow-950 dark:text-yellow-100"
          >
            {t('banner.visitor', { ratio: ratioOf(groupRatio, initialGroup(groupRatio)) })}{' '}
            <Link to="/login" className="font-medium underline">
              {t('banner.signIn')}
            </Link>
          </p>
        )
      ) : null}
      <p
        role="note"
        className="mb-4 rounded-md border border-blue-200 bg-blue-50 px-4 py-3 text-sm text-blue-900 dark:border-blue-900 dark:bg-blue-950 dark:text-blue-100"
      >
        {t('formula.perToken', { unit: display.quotaPerUnit })} {t('formula.perCall')}
      </p>

      <div className="mb-3 grid grid-cols-1 gap-2 sm:grid-cols-[1fr_minmax(12rem,18rem)_auto] sm:items-end">
        <Input
          type="search"
          label={t('search.label')}
          placeholder={t('search.placeholder')}
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <Select
          label={t('group.label')}
          value={group}
          disabled={groupOptions.length === 0}
          options={groupOptions.length > 0 ? groupOptions : [{ value: group, label: group }]}
          onChange={(e) => switchGroup(e.target.value)}
        />
        <Button disabled={selected.size === 0} onClick={() => void copy(selectedNames(sorted, selected))}>
          {selected.size > 0 ? t('copySelected.count', { count: selected.size }) : t('copySelected')}
        </Button>
      </div>

      {pricing.isPending ? (
        <PageSpinner />
      ) : pricing.isError ? (
        <EmptyState title={t('failed.title')}>
          <p className="text-sm">{pricing.error.message}</p>
          <Button variant="secondary" onClick={() => void pricing.refetch()}>
            {t('failed.retry')}
          </Button>
        </EmptyState>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
          <table className="min-w-full divide-y divide-gray-200 text-sm dark:divide-gray-700">
            <thead className="bg-gray-50 dark:bg-gray-800">
              <tr className="text-left text-gray-600 dark:text-gray-300">
                <th className="w-8 px-3 py-2">
                  <input
                    type="checkbox"
                    aria-label={t('select.all')}
                    checked={allShownSelected}
                    disabled={rows.length === 0}
                    onChange={toggleAllShown}
                  />
                </th>
                <th className="whitespace-nowrap px-3 py-2 text-center font-medium">{t('col.available')}</th>
                <th className="whitespace-nowrap px-3 py-2 font-medium">{t('col.model')}</th>
                <th className="whitespace-nowrap px-3 py-2 font-medium">{t('col.billing')}</th>
                <th className="whitespace-nowrap px-3 py-2 font-medium">{t('col.groups')}</th>
                <th className="whitespace-nowrap px-3 py-2 font-medium">
                  <span className="inline-flex items-center gap-1">
                    {t('col.ratio')}
                    <button
                      type="button"
                      aria-label={t('ratioHelp.open')}
                      className="flex h-5 w-5 items-center justify-center rounded-full border border-gray-400 text-xs hover:bg-gray-200 dark:hover:bg-gray-700"
                      onClick={() => setRatioHelpOpen(true)}
                    >
                      ?
                    </button>
                  </span>
                </th>
                <th className="whitespace-nowrap px-3 py-2 font-medium">{t('col.price')}</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
              {rows.map((entry) => (
                <PricingRow
                  key={entry.model_name}
                  entry={entry}
                  group={group}
                  groupRatio={groupRatio}
                  display={display}
                  selected={selected.has(entry.model_name)}
                  onToggle={() => toggle(entry.model_name)}
                  onCopy={() => void copy(entry.model_name)}
                  onGroup={switchGroup}
                />
              ))}
            </tbody>
          </table>
          {rows.length === 0 ? (
            <EmptyState title={search.trim() ? t('empty.search') : t('empty.none')}>
              <p className="text-sm">{search.trim() ? t('empty.searchHint') : t('empty.noneHint')}</p>
            </EmptyState>
          ) : null}
        </div>
      )}

      <Modal open={ratioHelpOpen} onClose={() => setRatioHelpOpen(false)} title={t('ratioHelp.title')}>
        <ul className="list-disc space-y-2 pl-5">
          <li>{t('ratioHelp.model')}</li>
          <li>{t('ratioHelp.completion')}</li>
          <li>{t('ratioHelp.group')}</li>
          <li>{t('ratioHelp.example', { unit: display.quotaPerUnit })}</li>
          <li>{t('ratioHelp.cache')}</li>
          <li>{t('ratioHelp.longContext')}</li>
          <li>{t('ratioHelp.serviceTier')}</li>
          <li>{t('ratioHelp.fees')}</li>
        </ul>
      </Modal>
      {dialog}
    </main>
  );
}

function PricingRow({
  entry,
  group,
  groupRatio,
  display,
  selected,
  onToggle,
  onCopy,
  onGroup,
}: {
  entry: PricingEntry;
  group: string;
  groupRatio: Record<string, number>;
  display: PriceDisplay;
  selected: boolean;
  onToggle: () => void;
  onCopy: () => void;
  onGroup: (group: string) => void;
}) {
  const { t } = useTranslation('pricing');
  const ratio = ratioOf(groupRatio, group);
  const price = computePrice(entry, ratio, display);
  const available = isAvailable(entry, group);
  const unit = display.inCurrency ? '' : ` ${t('price.quotaUnit')}`;
  const money = (value: number) => formatPrice(value, display.inCurrency) + unit;
  return (
    <tr className="hover:bg-gray-50 dark:hover:bg-gray-800/50">
      <td className="px-3 py-2">
        <input
          type="checkbox"
          aria-label={t('select.one', { model: entry.model_name })}
          checked={selected}
          onChange={onToggle}
        />
      </td>
      <td className="px-3 py-2 text-center">
        {available ? (
          <span className="text-green-600 dark:text-green-400" title={t('available.yes', { group })}>
            <span aria-hidden="true">✓</span>
            <span className="sr-only">{t('available.yes', { group })}</span>
          </span>
        ) : (
          <span className="text-gray-400" title={t('available.no', { group })}>
            <span aria-hidden="true">✕</span>
            <span className="sr-only">{t('available.no', { group })}</span>
          </span>
        )}
      </td>
      <td className="min-w-44 px-3 py-2">
        <button
          type="button"
          className="break-words text-left font-medium text-blue-700 hover:underline dark:text-blue-400"
          title={t('copyModel')}
          onClick={onCopy}
        >
          {entry.model_name}
        </button>
      </td>
      <td className="whitespace-nowrap px-3 py-2">
        {entry.quota_type === BillingType.PerCall ? (
          <Tag color="purple">{t('billing.perCall')}</Tag>
        ) : (
          <Tag color="blue">{t('billing.perToken')}</Tag>
        )}
        {entry.batch_price ? (
          <span title={t('billing.batchHelp')} className="ml-1">
            <Tag color="green">{t('billing.batch')}</Tag>
          </span>
        ) : null}
      </td>
      <td className="min-w-32 px-3 py-2">
        {entry.enable_groups.length === 0 ? (
          <span className="text-xs text-gray-500">{t('groups.none')}</span>
        ) : (
          <span className="flex flex-wrap gap-1">
            {entry.enable_groups.map((name) => (
              <button
                key={name}
                type="button"
                aria-pressed={name === group}
                title={t('groups.view', { group: name })}
                onClick={() => onGroup(name)}
              >
                <Tag
                  color={name === group ? groupRatioColor(ratioOf(groupRatio, name)) : 'gray'}
                  className={name === group ? 'ring-1 ring-current' : ''}
                >
                  {name}
                </Tag>
              </button>
            ))}
          </span>
        )}
      </td>
      <td className="whitespace-nowrap px-3 py-2 text-xs">
        {entry.quota_type === BillingType.PerCall ? (
          <div>{t('ratio.group', { ratio })}</div>
        ) : (
          <>
            <div>{t('ratio.model', { ratio: entry.model_ratio })}</div>
            <div>{t('ratio.completion', { ratio: entry.completion_ratio })}</div>
            <div>{t('ratio.group', { ratio })}</div>
          </>
        )}
      </td>
      <td className="whitespace-nowrap px-3 py-2 text-xs">
        {price.type === 'per-call' ? (
          <div>{t('price.perCall', { price: money(price.perCall) })}</div>
        ) : (
          <>
            <div>{t('price.input', { price: money(price.input) })}</div>
            <div>{t('price.output', { price: money(price.output) })}</div>
          </>
        )}
        <ExtraPriceLines entry={entry} groupRatio={ratio} display={display} money={money} />
      </td>
    </tr>
  );
}

/**
 * Cache, long-context, service-tier and fee prices under a model's input and output, each as the provider
 * publishes it ("Above 200K tokens: $6 / $22.5", "priority ×2: …", "Web search $10 / 1K searches").
 */
function ExtraPriceLines({
  entry,
  groupRatio,
  display,
  money,
}: {
  entry: PricingEntry;
  groupRatio: number;
  display: PriceDisplay;
  money: (value: number) => string;
}) {
  const { t } = useTranslation('pricing');
  const extra = computeExtraPrices(entry, groupRatio, display);
  const lines: string[] = [];
  if (extra.cacheRead !== undefined) lines.push(t('price.cacheRead', { price: money(extra.cacheRead) }));
  if (extra.cacheWrite !== undefined)
    lines.push(
      t(extra.cacheWrite1h === undefined ? 'price.cacheWrite' : 'price.cacheWrite5m', {
        price: money(extra.cacheWrite),
      }),
    );
  if (extra.cacheWrite1h !== undefined)
    lines.push(t('price.cacheWrite1h', { price: money(extra.cacheWrite1h) }));
  for (const tier of extra.tiers) {
    const tokens = formatThreshold(tier.above);
    const prices = { tokens, input: money(tier.input), output: money(tier.output) };
    lines.push(
      tier.cacheRead === undefined
        ? t('price.longContext', prices)
        : t('price.longContextCache', { ...prices, cache: money(tier.cacheRead) }),
    );
  }
  for (const tier of extra.serviceTiers)
    lines.push(
      t('price.serviceTier', {
        tier: tier.tier,
        ratio: tier.ratio,
        input: money(tier.input),
        output: money(tier.output),
      }),
    );
  if (extra.webSearch !== undefined) lines.push(t('price.webSearch', { price: money(extra.webSearch) }));
  if (extra.image !== undefined) lines.push(t('price.image', { price: money(extra.image) }));
  if (lines.length === 0) return null;
  return (
    <div className="mt-1 text-gray-500 dark:text-gray-400">
      {lines.map((line) => (
        <div key={line}>{line}</div>
      ))}
    </div>
  );
}

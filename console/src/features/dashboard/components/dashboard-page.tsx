import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, EmptyState, Input, PageSpinner, Select, Spinner } from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { formatNumber, formatQuota, formatTokens } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useStatus } from '../../../lib/status.ts';
import { type DataFilters, fetchQuotaData, type QuotaDataRow } from '../api/data.ts';
import {
  bucketLabel,
  bucketTitle,
  buildTimeline,
  GRANULARITIES,
  type Granularity,
  isGranularity,
  METRICS,
  type Metric,
  modelBreakdown,
  OTHER_MODELS,
  stackedSeries,
  summarize,
} from '../buckets.ts';
import { OTHER_COLOR, seriesColor } from '../chart-scale.ts';
import { initialDataForm, toDataFilters } from '../filters.ts';
import { type DataFilterErrors, type DataFilterInput, validateDataFilters } from '../validation.ts';
import { ModelBreakdown } from './model-breakdown.tsx';
import { TimeChart } from './time-chart.tsx';

/** The status carries the default granularity beside the fields the shared type lists. */

/** The data dashboard (/detail): usage over time and by model, when the operator has turned it on. */
export function DashboardPage() {
  const { t } = useTranslation('dashboard');
  const status = useStatus();
  const user = useSessionUser();
  const admin = isAdmin(user);
  if (!status.data) {
    return status.isError ? <Disabled admin={admin} title={t('statusFailed')} /> : <PageSpinner />;
  }
  if (!status.data.enable_data_export) return <Disabled admin={admin} />;
  const configured = status.data.data_export_default_time;
  return (
    <Dashboard
      admin={admin}
      defaultGranularity={isGranularity(configured) ? configured : 'hour'}
      display={{ quotaPerUnit: status.data.quota_per_unit, inCurrency: status.data.display_in_currency }}
    />
  );
}

/** The empty state when the dashboard is off: it says who can turn it on, and where. */
function Disabled({ admin, title }: { admin: boolean; title?: string }) {
  const { t } = useTranslation('dashboard');
  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">{t('title')}</h1>
      <EmptyState title={title ?? t('disabled.title')}>
        <p className="max-w-md text-sm">{admin ? t('disabled.admin') : t('disabled.user')}</p>
        {admin ? (
          <Link to="/setting" className="text-sm text-blue-600 hover:underline">
            {t('disabled.link')}
          </Link>
        ) : null}
      </EmptyState>
    </section>
  );
}

interface Display {
  quotaPerUnit: number;
  inCurrency: boolean;
}

/** Dollars in cents like elsewhere, but a spend under a cent keeps three digits rather than reading $0.00. */
function formatDollars(value: number): string {
  if (value === 0 || value >= 0.01) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(3))}`;
}

function Dashboard({
  admin,
  defaultGranularity,
  display,
}: {
  admin: boolean;
  defaultGranularity: Granularity;
  display: Display;
}) {
  const { t } = useTranslation('dashboard');
  const [form, setForm] = useState<DataFilterInput>(() => initialDataForm(defaultGranularity));
  const [errors, setErrors] = useState<DataFilterErrors>({});
  const [filters, setFilters] = useState<DataFilters>(() => toDataFilters(form, admin));
  const [granularity, setGranularity] = useState<Granularity>(defaultGranularity);
  const [metric, setMetric] = useState<Metric>('quota');

  const data = useQuery({
    queryKey: ['quota-data', admin, filters],
    queryFn: () => fetchQuotaData(admin, filters),
    placeholderData: keepPreviousData,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateDataFilters(form, admin);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const next = toDataFilters(form, admin);
    setGranularity(form.granularity);
    if (JSON.stringify(next) === JSON.stringify(filters)) void data.refetch();
    else setFilters(next);
  };

  const reset = () => {
    const fresh = initialDataForm(defaultGranularity);
    setForm(fresh);
    setErrors({});
    setGranularity(defaultGranularity);
    setFilters(toDataFilters(fresh, admin));
  };

  /** The granularity only regroups what is loaded, so it applies at once when the range allows it. */
  const changeGranularity = (value: string) => {
    if (!isGranularity(value)) return;
    const next = { ...form, granularity: value };
    setForm(next);
    const found = validateDataFilters(next, admin);
    setErrors(found);
    if (!found.granularity && !found.start && !found.end) setGranularity(value);
  };

  const set = (key: 'start' | 'end' | 'username') => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));

  const disabled = data.error instanceof ApiError && data.error.code === 'FEATURE_DISABLED';
  if (disabled) return <Disabled admin={admin} />;

  return (
    <section className="min-w-0">
      <h1 className="mb-4 text-xl font-semibold">{t('title')}</h1>
      <form
        onSubmit={submit}
        noValidate
        className="mb-4 grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-5 lg:items-start"
      >
        <Input
          type="datetime-local"
          label={t('filter.start')}
          value={form.start}
          onChange={set('start')}
          error={errors.start ? t(errors.start) : null}
        />
        <Input
          type="datetime-local"
          label={t('filter.end')}
          value={form.end}
          onChange={set('end')}
          hint={t('filter.endHint')}
          error={errors.end ? t(errors.end) : null}
        />
        <Select
          label={t('filter.granularity')}
          value={form.granularity}
          onChange={(e) => changeGranularity(e.target.value)}
          options={GRANULARITIES.map((g) => ({ value: g, label: t(`granularity.${g}`) }))}
          error={errors.granularity ? t(errors.granularity) : null}
        />
        {admin ? (
          <Input
            label={t('filter.username')}
            placeholder={t('filter.usernamePlaceholder')}
            value={form.username}
            onChange={set('username')}
            error={errors.username ? t(errors.username) : null}
          />
        ) : null}
        <div className="flex gap-2 sm:pt-6">
          <Button type="submit" loading={data.isFetching}>
            {t('filter.submit')}
          </Button>
          <Button variant="secondary" onClick={reset}>
            {t('filter.reset')}
          </Button>
        </div>
      </form>

      {data.isPending ? (
        <PageSpinner />
      ) : data.isError ? (
        <div
          role="alert"
          className="rounded-md border border-red-200 bg-red-50 px-4 py-3 text-sm text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-200"
        >
          <p>{t('failed', { message: data.error.message })}</p>
          <Button variant="secondary" size="sm" className="mt-2" onClick={() => void data.refetch()}>
            {t('retry')}
          </Button>
        </div>
      ) : (
        <Charts
          rows={data.data}
          range={filters}
          granularity={granularity}
          metric={metric}
          onMetric={setMetric}
          display={display}
          refreshing={data.isFetching}
        />
      )}
    </section>
  );
}

function Charts({
  rows,
  range,
  granularity,
  metric,
  onMetric,
  display,
  refreshing,
}: {
  rows: QuotaDataRow[];
  range: DataFilters;
  granularity: Granularity;
  metric: Metric;
  onMetric: (metric: Metric) => void;
  display: Display;
  refreshing: boolean;
}) {
  const { t } = useTranslation('dashboard');
  const summary = useMemo(() => summarize(rows, range), [rows, range]);
  const timeline = useMemo(() => buildTimeline(rows, granularity, range), [rows, granularity, range]);
  const stacked = useMemo(() => stackedSeries(rows, timeline, metric), [rows, timeline, metric]);
  const models = useMemo(() => modelBreakdown(rows, metric), [rows, metric]);

  if (rows.length === 0) {
    return (
      <EmptyState title={t('empty.title')}>
        <p className="max-w-md text-sm">{t('empty.hint')}</p>
      </EmptyState>
    );
  }

  // Quota is charted in dollars when money is shown, so the axis has readable round steps.
  const unit = display.quotaPerUnit > 0 ? display.quotaPerUnit : 500000;
  const toChart = (value: number) => (metric === 'quota' && display.inCurrency ? value / unit : value);
  const format = (value: number) =>
    metric === 'quota'
      ? display.inCurrency
        ? formatDollars(value)
        : formatNumber(Math.round(value))
      : formatNumber(value);
  const axisFormat = (value: number) =>
    metric === 'quota' && display.inCurrency ? `$${Number(value.toPrecision(6))}` : formatTokens(value);
  const labels = timeline.map((b) => bucketLabel(b.start, granularity));
  const titles = timeline.map((b) =>
    granularity === 'week'
      ? t('chart.weekOf', { date: bucketTitle(b.start, granularity) })
      : bucketTitle(b.start, granularity),
  );
  const modelLabel = (key: string) => (key === OTHER_MODELS ? t('chart.otherModels') : key);
  const colorIndex = new Map(stacked.map((s, i) => [s.key, i]));
  const colorOf = (key: string) => {
    if (key === OTHER_MODELS) return OTHER_COLOR;
    const index = colorIndex.get(key);
    return index === undefined ? OTHER_COLOR : seriesColor(index);
  };
  const metricName = t(`metric.${metric}`);

  return (
    <div className="flex flex-col gap-4">
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-5">
        <Card label={t('card.quota')} value={formatQuota(summary.quota, display)} />
        <Card
          label={t('card.tokens')}
          value={formatTokens(summary.tokens)}
          title={formatNumber(summary.tokens)}
        />
        <Card label={t('card.count')} value={formatNumber(summary.count)} />
        <Card label={t('card.rpm')} value={formatNumber(summary.rpm)} />
        <Card label={t('card.tpm')} value={formatNumber(summary.tpm)} />
      </dl>

      <div className="flex flex-wrap items-center gap-2">
        <span className="text-sm text-gray-600 dark:text-gray-300">{t('metric.label')}</span>
        {METRICS.map((m) => (
          <Button
            key={m}
            size="sm"
            variant={m === metric ? 'primary' : 'secondary'}
            aria-pressed={m === metric}
            onClick={() => onMetric(m)}
          >
            {t(`metric.${m}`)}
          </Button>
        ))}
        {refreshing ? <Spinner size="sm" className="text-blue-600" /> : null}
      </div>

      <Panel title={t('chart.trend', { metric: metricName })}>
        <TimeChart
          kind="line"
          title={t('chart.trend', { metric: metricName })}
          labels={labels}
          titles={titles}
          series={[
            {
              key: metric,
              label: metricName,
              color: seriesColor(0),
              values: timeline.map((b) => toChart(b[metric])),
            },
          ]}
          format={format}
          axisFormat={axisFormat}
        />
      </Panel>

      <div className="grid min-w-0 grid-cols-1 gap-4 xl:grid-cols-3">
        <Panel title={t('chart.byModel', { metric: metricName })} className="xl:col-span-2">
          <TimeChart
            kind="stacked"
            title={t('chart.byModel', { metric: metricName })}
            labels={labels}
            titles={titles}
            series={stacked.map((s) => ({
              key: s.key,
              label: modelLabel(s.key),
              color: colorOf(s.key),
              values: s.values.map(toChart),
            }))}
            format={format}
            axisFormat={axisFormat}
            totalLabel={t('chart.total')}
          />
        </Panel>
        <Panel title={t('chart.breakdown', { metric: metricName })}>
          <ModelBreakdown
            models={models}
            metric={metric}
            format={(value) => format(toChart(value))}
            colorOf={colorOf}
          />
        </Panel>
      </div>
    </div>
  );
}

function Card({ label, value, title }: { label: string; value: string; title?: string }) {
  return (
    <div className="min-w-0 rounded-lg border border-gray-200 bg-white px-4 py-3 dark:border-gray-700 dark:bg-gray-900">
      <dt className="truncate text-xs text-gray-500 dark:text-gray-400">{label}</dt>
      <dd className="mt-1 truncate text-lg font-semibold tabular-nums" title={title ?? value}>
        {value}
      </dd>
    </div>
  );
}

function Panel({ title, className, children }: { title: string; className?: string; children: ReactNode }) {
  return (
    <section
      className={`min-w-0 rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900 ${className ?? ''}`}
    >
      <h2 className="mb-3 text-sm font-semibold">{title}</h2>
      {children}
    </section>
  );
}

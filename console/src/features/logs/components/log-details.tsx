import { useTranslation } from 'react-i18next';
import { formatNumber, formatQuota, formatUsd } from '../../../lib/format.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import type { LogRow } from '../api/logs.ts';
import { parseOther, retryPath } from '../rules.ts';

/** The expanded part of a log row: how it was priced and the extra details of `other`. */
export function LogDetails({ log, admin }: { log: LogRow; admin: boolean }) {
  const { t } = useTranslation('logs');
  const display = useQuotaDisplay();
  const other = parseOther(log.other);
  const rows: [string, string][] = [];
  const add = (label: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') rows.push([label, String(value)]);
  };
  if (other.model_price !== undefined && other.model_price > 0) add(t('other.modelPrice'), other.model_price);
  else add(t('other.modelRatio'), other.model_ratio);
  add(t('other.completionRatio'), other.completion_ratio);
  add(t('other.groupRatio'), other.group_ratio);
  add(t('other.userGroupRatio'), other.user_group_ratio);
  if (other.cache_tokens) {
    add(t('other.cacheTokens'), other.cache_tokens);
    add(t('other.cacheRatio'), other.cache_ratio);
  }
  if (other.cache_creation_tokens_1h) {
    add(t('other.cacheCreation5mTokens'), other.cache_creation_tokens_5m);
    add(t('other.cacheCreation5mRatio'), other.cache_creation_ratio_5m);
    add(t('other.cacheCreation1hTokens'), other.cache_creation_tokens_1h);
    add(t('other.cacheCreation1hRatio'), other.cache_creation_ratio_1h);
  } else if (other.cache_creation_tokens) {
    add(t('other.cacheCreationTokens'), other.cache_creation_tokens);
    add(t('other.cacheCreationRatio'), other.cache_creation_ratio);
  }
  // What issue 39's price shapes add, so the charge can be redone by hand: the tier, the service tier, the fees.
  if (other.long_context_above) {
    add(
      t('other.longContext'),
      t('other.longContextAbove', { tokens: formatNumber(other.long_context_above) }),
    );
    add(t('other.longContextInputRatio'), other.long_context_input_ratio);
    add(t('other.longContextOutputRatio'), other.long_context_output_ratio);
    add(t('other.longContextCacheRatio'), other.long_context_cache_ratio);
  }
  if (other.service_tier) {
    add(t('other.serviceTier'), other.service_tier);
    add(t('other.serviceTierRatio'), other.service_tier_ratio);
  }
  const perUnit = (count: number | undefined, usdEach: number | undefined) =>
    count ? `${formatNumber(count)} × ${usdEach === undefined ? '?' : formatUsd(usdEach)}` : undefined;
  add(t('other.webSearches'), perUnit(other.web_search_calls, other.web_search_price));
  add(t('other.images'), perUnit(other.image_count, other.image_price));
  if (other.fees_quota)
    add(
      t('other.feesQuota'),
      display.inCurrency
        ? `${formatNumber(other.fees_quota)} (${formatQuota(other.fees_quota, display)})`
        : formatNumber(other.fees_quota),
    );
  if (other.audio || other.ws) {
    add(t('other.textInput'), other.text_input);
    add(t('other.textOutput'), other.text_output);
    add(t('other.audioInput'), other.audio_input);
    add(t('other.audioOutput'), other.audio_output);
    add(t('other.audioRatio'), other.audio_ratio);
    add(t('other.audioCompletionRatio'), other.audio_completion_ratio);
  }
  if (other.frt !== undefined && other.frt > 0)
    add(t('other.firstToken'), `${(other.frt / 1000).toFixed(2)} s`);
  add(t('other.reasoningEffort'), other.reasoning_effort);
  if (other.claude) add(t('other.protocol'), 'Claude');
  if (admin) {
    if (other.is_model_mapped) add(t('other.upstreamModel'), other.upstream_model_name);
    add(t('other.retry'), retryPath(other));
  }
  add(t('other.requestId'), log.request_id);
  add(t('other.content'), log.content);
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-1 text-xs sm:grid-cols-2" aria-label={t('details.title')}>
      {rows.length === 0 ? <p className="text-gray-500">{t('details.none')}</p> : null}
      {rows.map(([label, value]) => (
        <div key={label} className="flex gap-2 break-all">
          <dt className="shrink-0 text-gray-500">{label}</dt>
          <dd className="whitespace-pre-wrap">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

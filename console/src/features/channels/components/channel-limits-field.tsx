/**
 * The channel's limits in the channel drawer (docs/adr/0028): requests per minute, tokens per minute and requests
 * at a time on this channel across every relay; blank or 0 is no limit. A channel at its limit is passed over for
 * another one of the model.
 */
import { useTranslation } from 'react-i18next';
import {
  LIMIT_KEYS,
  LimitFields,
  type LimitTexts,
  limitTextsOf,
  parseLimitTexts,
} from '../../../components/limit-fields.tsx';
import type { ChannelView } from '../api/channels.ts';

/** The drawer's fields for a channel being edited or copied, or blank for a new one. */
export const channelLimitTexts = (channel?: ChannelView): LimitTexts =>
  limitTextsOf(
    channel && { rpm: channel.rpm_limit, tpm: channel.tpm_limit, concurrency: channel.concurrency_limit },
  );

/** The request fields, or undefined while a field is not a whole number of 0 or more. */
export function channelLimitInput(
  texts: LimitTexts,
): { rpm_limit: number; tpm_limit: number; concurrency_limit: number } | undefined {
  const parsed = parseLimitTexts(texts);
  if (!parsed.ok) return undefined;
  return {
    rpm_limit: parsed.value.rpm,
    tpm_limit: parsed.value.tpm,
    concurrency_limit: parsed.value.concurrency,
  };
}

export function ChannelLimitsField({
  value,
  onChange,
}: {
  value: LimitTexts;
  onChange(value: LimitTexts): void;
}) {
  const { t } = useTranslation('channels');
  const parsed = parseLimitTexts(value);
  const wrong = parsed.ok ? undefined : parsed.field;
  return (
    <LimitFields
      name="channel-limit"
      value={value}
      onChange={onChange}
      labels={{
        rpm: t('field.rpmLimit'),
        tpm: t('field.tpmLimit'),
        concurrency: t('field.concurrencyLimit'),
      }}
      errors={Object.fromEntries(
        LIMIT_KEYS.filter((k) => k === wrong).map((k) => [k, t('error.limitInteger')]),
      )}
      hint={t('field.limitsHint')}
    />
  );
}

/** How much the channel takes: the longest input it is given, and its requests and tokens per minute and at a time. */
import { useTranslation } from 'react-i18next';
import { Input } from '../../../../components/ui/index.ts';
import { ChannelLimitsField } from '../channel-limits-field.tsx';
import { editOf, Section, type SectionProps } from './section.tsx';

export function LimitsSection({ state, dispatch }: SectionProps) {
  const { t } = useTranslation('channels');
  const { form } = state;
  const edit = editOf(dispatch);
  return (
    <Section title={t('drawer.limits')}>
      <Input
        label={t('field.maxInputTokens')}
        type="number"
        min={0}
        value={form.max_input_tokens}
        onChange={(e) => edit({ max_input_tokens: e.target.value })}
      />
      <ChannelLimitsField value={form.limits} onChange={(limits) => edit({ limits })} />
    </Section>
  );
}

/**
 * What the relay does with the channel's traffic and failures: status code mapping, automatic disabling, the
 * outbound proxy, the `setting` switches the relay reads (as fields over the same JSON text) and the parameter
 * override.
 */
import { useTranslation } from 'react-i18next';
import { Input, Switch, Textarea } from '../../../../components/ui/index.ts';
import { readSettingFields } from '../../channel-setting.ts';
import { editOf, Section, type SectionProps } from './section.tsx';

export function AdvancedSection({ state, dispatch }: SectionProps) {
  const { t } = useTranslation('channels');
  const { form, fieldErrors } = state;
  const edit = editOf(dispatch);
  const error = (field: keyof typeof fieldErrors) => {
    const key = fieldErrors[field];
    return key ? t(key) : undefined;
  };
  // unusable while the setting text is not a JSON object
  const setting = readSettingFields(form.setting);
  return (
    <Section title={t('drawer.advanced')}>
      <Textarea
        label={t('field.statusCodeMapping')}
        placeholder={t('field.statusCodeMappingPlaceholder')}
        value={form.status_code_mapping}
        error={error('status_code_mapping')}
        onChange={(e) => edit({ status_code_mapping: e.target.value })}
        onBlur={() => dispatch({ type: 'check', field: 'status_code_mapping' })}
      />
      <Switch checked={form.auto_ban} onChange={(v) => edit({ auto_ban: v })} label={t('field.autoBan')} />
      <Input
        label={t('field.proxy')}
        placeholder={t('field.proxyPlaceholder')}
        hint={setting ? t('field.proxyHint') : t('field.settingFieldsLocked')}
        value={setting?.proxy ?? ''}
        disabled={!setting}
        error={error('proxy')}
        autoComplete="off"
        onChange={(e) => dispatch({ type: 'setSetting', key: 'proxy', value: e.target.value })}
        onBlur={() => dispatch({ type: 'check', field: 'proxy' })}
      />
      <div>
        <Switch
          checked={setting?.force_format ?? false}
          disabled={!setting}
          onChange={(v) => dispatch({ type: 'setSetting', key: 'force_format', value: v })}
          label={t('field.forceFormat')}
        />
        <p className="mt-1 text-xs text-gray-500">{t('field.forceFormatHint')}</p>
      </div>
      <div>
        <Switch
          checked={setting?.thinking_to_content ?? false}
          disabled={!setting}
          onChange={(v) => dispatch({ type: 'setSetting', key: 'thinking_to_content', value: v })}
          label={t('field.thinkingToContent')}
        />
        <p className="mt-1 text-xs text-gray-500">{t('field.thinkingToContentHint')}</p>
      </div>
      <Textarea
        label={t('field.setting')}
        placeholder={t('field.settingPlaceholder')}
        value={form.setting}
        error={error('setting')}
        onChange={(e) => edit({ setting: e.target.value })}
        onBlur={() => dispatch({ type: 'check', field: 'setting' })}
      />
      <Textarea
        label={t('field.paramOverride')}
        placeholder={t('field.paramOverridePlaceholder')}
        value={form.param_override}
        error={error('param_override')}
        onChange={(e) => edit({ param_override: e.target.value })}
        onBlur={() => dispatch({ type: 'check', field: 'param_override' })}
      />
    </Section>
  );
}

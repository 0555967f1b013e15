/** The models a channel serves (fetched, filled or typed), how their names are mapped, and the one it is tested with. */
import { useQuery } from '@tanstack/react-query';
import { findProviderType } from '@turnpike/core/providers/catalogue';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Tag, Textarea } from '../../../../components/ui/index.ts';
import { toast } from '../../../../lib/toast.ts';
import { fetchCatalogueModels, fetchUpstreamModels, fetchUpstreamModelsOf } from '../../api/channels.ts';
import { addCustomModels, normalizeBaseUrl, relatedModels } from '../../validation.ts';
import { editOf, Section, type SectionProps } from './section.tsx';

export function ModelsSection({
  state,
  dispatch,
  editId,
}: SectionProps & {
  /** The channel being edited (its stored key lists the upstream's models), null for a new one. */
  editId: number | null;
}) {
  const { t } = useTranslation('channels');
  const { form, fieldErrors } = state;
  const edit = editOf(dispatch);
  const provider = findProviderType(form.type);
  // typing and looking: not part of the channel, so they stay here
  const [custom, setCustom] = useState('');
  const [filter, setFilter] = useState('');
  const [fetching, setFetching] = useState(false);
  const catalogue = useQuery({
    queryKey: ['channel-catalogue'],
    queryFn: fetchCatalogueModels,
    staleTime: 300_000,
  });
  const catalogueNames = (catalogue.data ?? []).map((m) => m.id);
  const shown = form.models.filter((m) => m.toLowerCase().includes(filter.toLowerCase()));

  const fetchUpstream = async () => {
    if (editId === null && !form.key.trim()) {
      toast.error(t('error.fillKey'));
      dispatch({ type: 'refuse', problem: 'error.fillKey' });
      return;
    }
    setFetching(true);
    try {
      const names =
        editId !== null
          ? await fetchUpstreamModelsOf(editId)
          : await fetchUpstreamModels({
              type: form.type,
              base_url: normalizeBaseUrl(form.base_url),
              key: form.key,
              other: form.other,
            });
      dispatch({ type: 'addModels', names });
      toast.success(t('done.fetched', { count: names.length }));
    } catch {
      // the message is shown by the request client
    } finally {
      setFetching(false);
    }
  };

  const fill = (names: readonly string[]) =>
    edit({ models: addCustomModels(form.models, names.join(',')).models });

  const addCustom = () => {
    const { models, duplicates } = addCustomModels(form.models, custom);
    if (duplicates.length > 0) toast.warning(`${t('error.modelsExist')} ${duplicates.join(', ')}`);
    edit({ models });
    setCustom('');
  };

  return (
    <Section title={t('drawer.models')}>
      <div className="flex flex-wrap gap-2">
        <Button size="sm" variant="secondary" loading={fetching} onClick={() => void fetchUpstream()}>
          {t('models.fetch')}
        </Button>
        <Button
          size="sm"
          variant="secondary"
          disabled={catalogueNames.length === 0}
          onClick={() => fill(relatedModels(catalogueNames))}
        >
          {t('models.fillRelated')}
        </Button>
        <Button
          size="sm"
          variant="secondary"
          disabled={!provider}
          onClick={() => provider && fill(provider.defaultModels)}
        >
          {t('models.fillDefaults')}
        </Button>
        <Button size="sm" variant="ghost" onClick={() => edit({ models: [] })}>
          {t('models.clear')}
        </Button>
      </div>
      <Input label={t('models.filter')} value={filter} onChange={(e) => setFilter(e.target.value)} />
      <ul aria-label={t('models.selected')} className="flex max-h-48 flex-wrap gap-1 overflow-y-auto">
        {shown.map((m) => (
          <li key={m}>
            <Tag color="blue">
              {m}
              <button
                type="button"
                className="ml-1"
                aria-label={t('models.remove', { model: m })}
                onClick={() => edit({ models: form.models.filter((x) => x !== m) })}
              >
                ×
              </button>
            </Tag>
          </li>
        ))}
        {form.models.length === 0 ? <li className="text-xs text-gray-500">{t('models.none')}</li> : null}
      </ul>
      <div className="flex items-end gap-2">
        <div className="flex-1">
          <Input
            label={t('models.custom')}
            placeholder={t('models.customPlaceholder')}
            list="channel-catalogue-models"
            value={custom}
            onChange={(e) => setCustom(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                if (custom.trim()) addCustom();
              }
            }}
          />
          <datalist id="channel-catalogue-models">
            {catalogueNames
              .filter((m) => !form.models.includes(m))
              .map((m) => (
                <option key={m} value={m} />
              ))}
          </datalist>
        </div>
        <Button variant="secondary" onClick={addCustom} disabled={!custom.trim()}>
          {t('models.add')}
        </Button>
      </div>
      <Textarea
        label={t('field.modelMapping')}
        placeholder={t('field.modelMappingPlaceholder')}
        value={form.model_mapping}
        error={fieldErrors.model_mapping && t(fieldErrors.model_mapping)}
        onChange={(e) => edit({ model_mapping: e.target.value })}
        onBlur={() => dispatch({ type: 'check', field: 'model_mapping' })}
      />
      <Input
        label={t('field.testModel')}
        value={form.test_model}
        onChange={(e) => edit({ test_model: e.target.value })}
      />
    </Section>
  );
}

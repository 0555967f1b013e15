import type { ResourceSource } from '@turnpike/core/ownership/source';
import { useTranslation } from 'react-i18next';
import { Tag } from '../../../components/ui/index.ts';

/** `Channel team-a/openai`: how kubectl names the resource that owns a row. */
export const resourceName = (source: ResourceSource) => `${source.kind} ${source.namespace}/${source.name}`;

/**
 * Marks a row that a Kubernetes resource owns (docs/adr/0017): Git wins, so the console shows it read-only.
 * The title names the resource and the generation the row reflects.
 */
export function ManagedBadge({ source }: { source: ResourceSource }) {
  const { t } = useTranslation('channels');
  return (
    <Tag color="blue">
      <span title={t('managed.title', { resource: resourceName(source), generation: source.generation })}>
        {t('managed.badge')}
      </span>
    </Tag>
  );
}

/** Which requests reach the channel and how often it is picked: its groups, priority, weight and tag. */
import { useTranslation } from 'react-i18next';
import { Input } from '../../../../components/ui/index.ts';
import { editOf, Section, type SectionProps } from './section.tsx';

export function RoutingSection({
  state,
  dispatch,
  groups,
}: SectionProps & {
  /** The groups the system knows; the channel's own are offered as well. */
  groups: readonly string[];
}) {
  const { t } = useTranslation('channels');
  const { form } = state;
  const edit = editOf(dispatch);
  const choices = [...new Set([...groups, ...form.groups])];
  return (
    <Section title={t('drawer.routing')}>
      <fieldset>
        <legend className="mb-1 text-sm font-medium">{t('field.groups')}</legend>
        <div className="flex flex-wrap gap-3">
          {choices.map((g) => (
            <label key={g} className="flex items-center gap-1 text-sm">
              <input
                type="checkbox"
                checked={form.groups.includes(g)}
                onChange={(e) =>
                  edit({
                    groups: e.target.checked ? [...form.groups, g] : form.groups.filter((x) => x !== g),
                  })
                }
              />
              {g}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <Input
          label={t('field.priority')}
          type="number"
          value={form.priority}
          onChange={(e) => edit({ priority: e.target.value })}
        />
        <Input
          label={t('field.weight')}
          type="number"
          min={0}
          value={form.weight}
          onChange={(e) => edit({ weight: e.target.value })}
        />
      </div>
      <Input label={t('field.tag')} value={form.tag} onChange={(e) => edit({ tag: e.target.value })} />
    </Section>
  );
}

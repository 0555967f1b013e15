import { useTranslation } from 'react-i18next';
import { EmptyState } from '../ui/empty-state.tsx';

/** A page whose screen is built in a later slice; it still has its title so navigation can be tested. */
export function Placeholder({ title }: { title: string }) {
  const { t } = useTranslation();
  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">{t(title)}</h1>
      <EmptyState title={t('common.comingSoon')} />
    </section>
  );
}

import { createFileRoute } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';

function Home() {
  const { t } = useTranslation();
  return (
    <main className="mx-auto max-w-3xl p-8">
      <h1 className="text-3xl font-semibold">{t('app.name')}</h1>
    </main>
  );
}

export const Route = createFileRoute('/')({ component: Home });

import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Link, Outlet } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { Footer } from '../components/layout/footer.tsx';
import { TopBar } from '../components/layout/top-bar.tsx';
import { Toaster } from '../components/ui/toaster.tsx';
import { requireSetup } from '../lib/guards.ts';

function NotFound() {
  const { t } = useTranslation();
  return (
    <main className="mx-auto max-w-xl p-8 text-center">
      <h1 className="text-2xl font-semibold">{t('notFound.title')}</h1>
      <p className="mt-2 text-gray-500">{t('notFound.body')}</p>
      <Link to="/" className="mt-4 inline-block text-blue-600 hover:underline">
        {t('notFound.back')}
      </Link>
    </main>
  );
}

function RootLayout() {
  return (
    <div className="flex min-h-screen flex-col">
      <TopBar />
      <div className="flex-1">
        <Outlet />
      </div>
      <Footer />
      <Toaster />
    </div>
  );
}

export const Route = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  beforeLoad: ({ context, location }) => requireSetup(context.queryClient, location.pathname),
  component: RootLayout,
  notFoundComponent: NotFound,
});

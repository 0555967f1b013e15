import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../../lib/api.ts';
import { useStatus } from '../../../lib/status.ts';

/** Content set by the administrator: a URL is shown in an iframe, anything else as Markdown or HTML. */
export function renderContent(
  content: string,
): { kind: 'url'; url: string } | { kind: 'html'; html: string } {
  const trimmed = content.trim();
  if (/^https?:\/\/\S+$/.test(trimmed)) return { kind: 'url', url: trimmed };
  return { kind: 'html', html: DOMPurify.sanitize(marked.parse(trimmed, { async: false })) };
}

export function AdminContent({ content, testId }: { content: string; testId: string }) {
  const rendered = renderContent(content);
  if (rendered.kind === 'url')
    return (
      <iframe
        data-testid={testId}
        src={rendered.url}
        title={testId}
        className="h-[calc(100vh-8rem)] w-full border-0"
      />
    );
  return (
    <article
      data-testid={testId}
      className="prose max-w-none p-4 sm:p-8 dark:prose-invert [&_a]:text-blue-600 [&_h1]:text-2xl [&_h1]:font-semibold [&_h2]:text-xl [&_h2]:font-semibold [&_p]:my-2"
      // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify
      dangerouslySetInnerHTML={{ __html: rendered.html }}
    />
  );
}

/** The administrator's announcement (Notice, Markdown) above the home page; the visitor can close it. */
export function NoticeBanner() {
  const { t } = useTranslation();
  const [closed, setClosed] = useState(false);
  const notice = useQuery({
    queryKey: ['notice'],
    queryFn: () => api.get<string>('/api/notice', { silent: true }),
  });
  const text = notice.data?.trim();
  if (!text || closed) return null;
  return (
    <aside
      aria-label={t('notice.title')}
      data-testid="notice"
      className="mx-auto mt-4 flex max-w-5xl gap-3 rounded-md border border-blue-200 bg-blue-50 px-4 py-3 text-sm text-blue-900 dark:border-blue-900 dark:bg-blue-950 dark:text-blue-100"
    >
      <div
        className="min-w-0 flex-1 break-words [&_a]:underline"
        // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify
        dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(marked.parse(text, { async: false })) }}
      />
      <button
        type="button"
        aria-label={t('notice.close')}
        onClick={() => setClosed(true)}
        className="self-start rounded px-1 hover:bg-blue-100 dark:hover:bg-blue-900"
      >
        ✕
      </button>
    </aside>
  );
}

export function HomePage() {
  return (
    <>
      <div className="px-4">
        <NoticeBanner />
      </div>
      <HomeContent />
    </>
  );
}

function HomeContent() {
  const { t } = useTranslation();
  const { data: status } = useStatus();
  const content = useQuery({
    queryKey: ['home_page_content'],
    queryFn: () => api.get<string>('/api/home_page_content', { silent: true }),
  });
  if (content.data?.trim()) return <AdminContent content={content.data} testId="home-content" />;
  const base = status?.server_address || (typeof window !== 'undefined' ? window.location.origin : '');
  return (
    <main className="mx-auto max-w-3xl px-4 py-16 text-center">
      <h1 className="text-3xl font-semibold sm:text-4xl">
        {t('home.welcome', { name: status?.system_name || t('app.name') })}
      </h1>
      <p className="mt-4 text-gray-600 dark:text-gray-300">{t('home.intro')}</p>
      <p className="mt-6 text-sm text-gray-500">
        {t('home.baseUrl')}: <code className="rounded bg-gray-100 px-2 py-1 dark:bg-gray-800">{base}</code>
      </p>
      <Link
        to="/token"
        className="mt-8 inline-block rounded-md bg-blue-600 px-5 py-2 text-white hover:bg-blue-700"
      >
        {t('home.goConsole')}
      </Link>
    </main>
  );
}

export function AboutPage() {
  const { t } = useTranslation();
  const about = useQuery({
    queryKey: ['about'],
    queryFn: () => api.get<string>('/api/about', { silent: true }),
  });
  if (about.data?.trim()) return <AdminContent content={about.data} testId="about-content" />;
  return (
    <main className="mx-auto max-w-3xl px-4 py-10">
      <h1 className="text-2xl font-semibold">{t('about.title')}</h1>
      <p className="mt-4 text-gray-600 dark:text-gray-300">{t('about.empty')}</p>
    </main>
  );
}

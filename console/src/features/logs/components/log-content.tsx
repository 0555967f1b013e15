import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { fetchLogContent } from '../api/content.ts';

/** JSON shown indented; other text as it is. */
function readable(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * A log detail's content section: the call's prompt and answer when its group or token kept content logs, loaded
 * when asked for (the API shows them to administrators and to the call's owner only).
 */
export function LogContent({ requestId }: { requestId: string }) {
  const { t } = useTranslation('audit');
  const [asked, setAsked] = useState(false);
  const content = useQuery({
    queryKey: ['log-content', requestId],
    queryFn: () => fetchLogContent(requestId),
    enabled: asked && requestId !== '',
    retry: false,
  });
  if (requestId === '') return null;
  if (!asked)
    return (
      <Button size="sm" variant="secondary" className="mt-2" onClick={() => setAsked(true)}>
        {t('content.show')}
      </Button>
    );
  if (content.isError) return <p className="mt-2 text-xs text-gray-500">{t('content.none')}</p>;
  if (!content.data) return null;
  const { prompt, answer, truncated, redactions } = content.data;
  return (
    <section aria-label={t('content.title')} className="mt-2 grid grid-cols-1 gap-2 text-xs lg:grid-cols-2">
      <p className="text-gray-500 lg:col-span-2">
        {truncated ? `${t('content.truncated')} · ` : ''}
        {t('content.redactions', { count: redactions })}
      </p>
      <figure>
        <figcaption className="text-gray-500">{t('content.prompt')}</figcaption>
        <pre className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded bg-white p-2 dark:bg-gray-900">
          {readable(prompt)}
        </pre>
      </figure>
      <figure>
        <figcaption className="text-gray-500">{t('content.answer')}</figcaption>
        <pre className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded bg-white p-2 dark:bg-gray-900">
          {readable(answer)}
        </pre>
      </figure>
    </section>
  );
}

import DOMPurify from 'dompurify';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../../lib/status.ts';

/** The administrator's footer HTML, sanitised, or the default credit line. */
export function Footer() {
  const { t } = useTranslation();
  const { data: status } = useStatus();
  const html = status?.footer_html?.trim();
  return (
    <footer className="border-t border-gray-200 px-4 py-4 text-center text-xs text-gray-500 dark:border-gray-800 dark:text-gray-400">
      {html ? (
        // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify
        <div data-testid="custom-footer" dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(html) }} />
      ) : (
        <span>{t('footer.credit')}</span>
      )}
    </footer>
  );
}

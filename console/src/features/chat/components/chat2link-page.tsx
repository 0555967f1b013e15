import { Link } from '@tanstack/react-router';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, EmptyState, PageSpinner, Spinner } from '../../../components/ui/index.ts';
import { useStatus } from '../../../lib/status.ts';
import { chat2Link, isScriptLink, serverAddress } from '../links.ts';
import { useChatKey } from './use-chat-key.ts';

/** Leaves the console for the chat front-end; replaced in tests (jsdom cannot navigate). */
const leaveFor = (url: string) => window.location.replace(url);

/**
 * /chat2link: builds the chat link from the first enabled token's key and the server address setting, then
 * goes there (replacing this page in the history, so Back returns to the console rather than here again).
 */
export function Chat2LinkPage({ open = leaveFor }: { open?: (url: string) => void }) {
  const { t } = useTranslation('chat');
  const status = useStatus();
  const chatLink = status.data?.chat_link?.trim() ?? '';
  const key = useChatKey(chatLink !== '');
  const built =
    chatLink && typeof key.data === 'string'
      ? chat2Link(chatLink, key.data, serverAddress(status.data?.server_address, window.location.origin))
      : null;
  const target = built && !isScriptLink(built) ? built : null;

  useEffect(() => {
    if (target) open(target);
  }, [target, open]);

  if (status.isPending) return <PageSpinner />;
  if (!chatLink) return <EmptyState title={t('error.noLinks')} />;
  if (built && !target) return <EmptyState title={t('error.badConfig')} />;
  if (key.isPending) return <PageSpinner />;
  if (key.isError)
    return (
      <EmptyState title={t('error.tokensFailed')}>
        <Button variant="secondary" onClick={() => void key.refetch()}>
          {t('retry')}
        </Button>
      </EmptyState>
    );
  if (!target)
    return (
      <EmptyState title={t('error.noToken')}>
        <Link to="/token" className="text-blue-600 hover:underline dark:text-blue-400">
          {t('goTokens')}
        </Link>
      </EmptyState>
    );
  return (
    <div className="flex flex-col items-center gap-3 py-10 text-center">
      <Spinner size="lg" className="text-blue-600" />
      <p className="font-medium">{t('redirecting')}</p>
      <a href={target} className="text-sm text-blue-600 hover:underline dark:text-blue-400">
        {t('openManually')}
      </a>
    </div>
  );
}

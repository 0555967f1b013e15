import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, EmptyState, PageSpinner } from '../../../components/ui/index.ts';
import { useStatus } from '../../../lib/status.ts';
import { readStored, StorageKey } from '../../../lib/storage.ts';
import { chatIndex, fillChatLink, isScriptLink, isWebLink, parseChatLinks, serverAddress } from '../links.ts';
import { useChatKey } from './use-chat-key.ts';

function Notice({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <main className="mx-auto max-w-xl p-6">
      <EmptyState title={title}>{children}</EmptyState>
    </main>
  );
}

/**
 * /chat/{id}: the chat front-end of the Chats option at index `id` (the first when left out), in a frame,
 * signed in with the user's first enabled token.
 */
export function ChatPage({ id }: { id: string | undefined }) {
  const { t } = useTranslation('chat');
  const status = useStatus();
  const parsed = parseChatLinks(status.data?.chats ?? readStored(StorageKey.Chats));
  const index = chatIndex(id);
  const chat = parsed.kind === 'ok' && index !== null ? parsed.links[index] : undefined;
  const key = useChatKey(chat !== undefined);

  if (parsed.kind === 'invalid') return <Notice title={t('error.badConfig')} />;
  if (parsed.links.length === 0) return <Notice title={t('error.noLinks')} />;
  if (!chat)
    return (
      <Notice title={t('error.noSuchLink')}>
        <p className="text-sm">{t('pickAnother')}</p>
        <ul className="mt-2 flex flex-wrap justify-center gap-2">
          {parsed.links.map((link, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the position is the chat's id in /chat/{id}
            <li key={i}>
              <Link
                to="/chat/$"
                params={{ _splat: String(i) }}
                className="text-blue-600 hover:underline dark:text-blue-400"
              >
                {link.name}
              </Link>
            </li>
          ))}
        </ul>
      </Notice>
    );
  if (key.isPending) return <PageSpinner />;
  if (key.isError)
    return (
      <Notice title={t('error.tokensFailed')}>
        <Button variant="secondary" onClick={() => void key.refetch()}>
          {t('retry')}
        </Button>
      </Notice>
    );
  if (key.data === null)
    return (
      <Notice title={t('error.noToken')}>
        <Link to="/token" className="text-blue-600 hover:underline dark:text-blue-400">
          {t('goTokens')}
        </Link>
      </Notice>
    );

  const link = fillChatLink(
    chat.template,
    key.data,
    serverAddress(status.data?.server_address, window.location.origin),
  );
  if (isScriptLink(link)) return <Notice title={t('error.badConfig')} />;
  if (!isWebLink(link))
    return (
      <Notice title={t('appLink', { name: chat.name })}>
        <a href={link} className="text-blue-600 hover:underline dark:text-blue-400">
          {t('openApp', { name: chat.name })}
        </a>
      </Notice>
    );
  return (
    <iframe
      src={link}
      title={chat.name}
      allow="clipboard-read; clipboard-write; microphone"
      referrerPolicy="no-referrer"
      className="block h-[calc(100vh-3.5rem)] w-full border-0"
    />
  );
}

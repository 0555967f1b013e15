import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, cx, Spinner } from '../../../components/ui/index.ts';
import type { ChatMessage } from '../messages.ts';

interface ChatBoxProps {
  messages: readonly ChatMessage[];
  /** A reply is on its way: Send becomes Stop. */
  streaming: boolean;
  onSend: (text: string) => boolean;
  onStop: () => void;
  onClear: () => void;
}

function MessageBubble({ message }: { message: ChatMessage }) {
  const { t } = useTranslation('playground');
  const mine = message.role === 'user';
  const failed = message.status === 'error';
  return (
    <li
      data-testid="message"
      data-status={message.status}
      className={cx('flex', mine ? 'justify-end' : 'justify-start')}
    >
      <div
        className={cx(
          'max-w-[85%] rounded-lg px-3 py-2 text-sm',
          mine
            ? 'bg-blue-600 text-white'
            : failed
              ? 'border border-red-300 bg-red-50 text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200'
              : 'bg-gray-100 text-gray-900 dark:bg-gray-800 dark:text-gray-100',
        )}
      >
        <p className="sr-only">{mine ? t('chat.you') : t('chat.assistant')}</p>
        {message.status === 'loading' ? (
          <span className="inline-flex items-center gap-2 text-gray-500 dark:text-gray-400">
            <Spinner size="sm" />
            {t('chat.thinking')}
          </span>
        ) : (
          <p className="whitespace-pre-wrap break-words [overflow-wrap:anywhere]">
            {failed ? <span className="font-medium">{t('chat.failed')} </span> : null}
            {message.content}
            {message.status === 'incomplete' ? (
              <span aria-hidden="true" className="ml-0.5 inline-block w-2 animate-pulse">
                ▍
              </span>
            ) : null}
          </p>
        )}
        {message.stopped ? (
          <p className="mt-1 text-xs italic text-gray-500 dark:text-gray-400">{t('chat.stopped')}</p>
        ) : null}
      </div>
    </li>
  );
}

/** The conversation, the message box, Send/Stop and Clear context. */
export function ChatBox({ messages, streaming, onSend, onStop, onClear }: ChatBoxProps) {
  const { t } = useTranslation('playground');
  const [draft, setDraft] = useState('');
  const listRef = useRef<HTMLOListElement>(null);
  const last = messages[messages.length - 1];

  // follow the reply as it grows
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll whenever the last message changes
  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [messages.length, last?.content, last?.status]);

  const send = () => {
    if (streaming || !draft.trim()) return;
    if (onSend(draft)) setDraft('');
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send();
  };
  // Enter sends, Shift+Enter breaks the line; not while an input method is composing
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <section
      aria-label={t('chat.title')}
      className="flex h-[calc(100vh-13rem)] min-h-80 w-full min-w-0 flex-col sm:h-[calc(100vh-9rem)] sm:min-h-96 md:flex-1 rounded-lg border border-gray-200 bg-white dark:border-gray-700 dark:bg-gray-900"
    >
      <header className="flex items-center justify-between gap-2 border-b border-gray-200 px-4 py-2 dark:border-gray-700">
        <h2 className="text-base font-semibold">{t('chat.title')}</h2>
        <Button variant="ghost" size="sm" onClick={onClear} disabled={streaming || messages.length === 0}>
          {t('chat.clear')}
        </Button>
      </header>
      {messages.length === 0 ? (
        <p className="flex flex-1 items-center justify-center p-6 text-center text-sm text-gray-500 dark:text-gray-400">
          {t('chat.empty')}
        </p>
      ) : (
        <ol
          ref={listRef}
          role="log"
          aria-label={t('chat.log')}
          className="flex flex-1 flex-col gap-3 overflow-y-auto p-4"
        >
          {messages.map((m) => (
            <MessageBubble key={m.id} message={m} />
          ))}
        </ol>
      )}
      <form
        onSubmit={submit}
        className="flex items-end gap-2 border-t border-gray-200 p-3 dark:border-gray-700"
      >
        <label className="sr-only" htmlFor="playground-input">
          {t('chat.input')}
        </label>
        <textarea
          id="playground-input"
          value={draft}
          rows={2}
          placeholder={t('chat.placeholder')}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          className="max-h-40 min-h-10 w-full flex-1 resize-y rounded-md border border-gray-300 bg-white px-3 py-2 text-sm text-gray-900 placeholder:text-gray-400 focus:border-blue-500 focus:outline-none focus:ring-2 focus:ring-blue-500/30 dark:border-gray-600 dark:bg-gray-900 dark:text-gray-100"
        />
        {streaming ? (
          <Button variant="danger" onClick={onStop}>
            {t('chat.stop')}
          </Button>
        ) : (
          <Button type="submit" disabled={!draft.trim()}>
            {t('chat.send')}
          </Button>
        )}
      </form>
    </section>
  );
}

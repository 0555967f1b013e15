import { useQuery } from '@tanstack/react-query';
import { useEffect, useReducer, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useIsMobile } from '../../../components/layout/use-mobile.ts';
import { Button, ConfirmDialog } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { streamChat, userModelsQuery } from '../api/playground.ts';
import {
  buildChatRequest,
  type ChatMessage,
  chatReducer,
  checkSettings,
  DEFAULT_MODEL,
  defaultSettings,
  greetingState,
  nextReplyId,
  type PlaygroundSettings,
} from '../messages.ts';
import { ChatBox } from './chat-box.tsx';
import { SettingsPanel } from './settings-panel.tsx';

/**
 * The chat playground (spec 03 "Chat playground"): settings on the left (a toggled panel on phones), the
 * conversation on the right, replies streamed from POST /pg/chat/completions under the console session.
 */
export function PlaygroundPage({ expired = false }: { expired?: boolean }) {
  const { t } = useTranslation('playground');
  const mobile = useIsMobile();
  const [panelOpen, setPanelOpen] = useState(false);
  const [settings, setSettings] = useState<PlaygroundSettings>(() =>
    defaultSettings(t('defaultSystemPrompt')),
  );
  const [showProblems, setShowProblems] = useState(false);
  const [chat, dispatch] = useReducer(chatReducer, undefined, () =>
    greetingState(t('greeting.user'), t('greeting.assistant'), Date.now()),
  );
  const [streamingId, setStreamingId] = useState<number | null>(null);
  const [confirmClear, setConfirmClear] = useState(false);
  const controller = useRef<AbortController | null>(null);
  const models = useQuery(userModelsQuery);

  // the default model may not exist on this site: start with the first model the user may call instead
  useEffect(() => {
    const list = models.data;
    if (!list || list.length === 0) return;
    setSettings((s) =>
      s.model === DEFAULT_MODEL && !list.includes(s.model) ? { ...s, model: list[0] ?? s.model } : s,
    );
  }, [models.data]);

  // leaving the page ends the reply on its way
  useEffect(() => () => controller.current?.abort(), []);

  const problems = checkSettings(settings);
  const hasProblems = Object.keys(problems).length > 0;

  const send = (text: string): boolean => {
    if (hasProblems) {
      setShowProblems(true);
      if (mobile) setPanelOpen(true);
      toast.error(problems.model ? t('error.modelRequired') : t('error.maxTokens'));
      return false;
    }
    const replyId = nextReplyId(chat);
    const question: ChatMessage = { id: 0, role: 'user', content: text, createdAt: 0, status: 'complete' };
    const body = buildChatRequest(settings, [...chat.messages, question]);
    dispatch({ type: 'send', text, now: Date.now() });
    const abort = new AbortController();
    controller.current = abort;
    setStreamingId(replyId);
    void streamChat(
      body,
      (piece) => dispatch({ type: 'delta', id: replyId, text: piece }),
      abort.signal,
    ).then((outcome) => {
      if (outcome.kind === 'error') dispatch({ type: 'fail', id: replyId, message: outcome.message });
      else dispatch({ type: 'finish', id: replyId, stopped: outcome.kind === 'stopped' });
      if (controller.current === abort) controller.current = null;
      setStreamingId((id) => (id === replyId ? null : id));
    });
    return true;
  };

  const stop = () => {
    if (streamingId !== null) dispatch({ type: 'finish', id: streamingId, stopped: true });
    controller.current?.abort();
  };

  const showPanel = !mobile || panelOpen;

  return (
    <div className="flex flex-col gap-3">
      {expired ? (
        <p
          role="alert"
          className="rounded-md bg-yellow-50 px-3 py-2 text-sm text-yellow-800 dark:bg-yellow-950 dark:text-yellow-200"
        >
          {t('expired')}
        </p>
      ) : null}
      {mobile ? (
        <Button
          variant="secondary"
          aria-expanded={panelOpen}
          aria-controls="playground-settings"
          onClick={() => setPanelOpen((open) => !open)}
          className="self-start"
        >
          {panelOpen ? t('settings.hide') : t('settings.show')}
        </Button>
      ) : null}
      <div className="flex flex-col gap-3 md:flex-row md:items-start">
        {showPanel ? (
          <div id="playground-settings" className="w-full shrink-0 md:w-72">
            <SettingsPanel
              settings={settings}
              onChange={(patch) => setSettings((s) => ({ ...s, ...patch }))}
              problems={showProblems ? problems : {}}
              disabled={streamingId !== null}
            />
          </div>
        ) : null}
        <ChatBox
          messages={chat.messages}
          streaming={streamingId !== null}
          onSend={send}
          onStop={stop}
          onClear={() => setConfirmClear(true)}
        />
      </div>
      <ConfirmDialog
        open={confirmClear}
        title={t('clear.title')}
        message={t('clear.message')}
        confirmText={t('clear.confirm')}
        danger
        onCancel={() => setConfirmClear(false)}
        onConfirm={() => {
          dispatch({ type: 'clear' });
          setConfirmClear(false);
        }}
      />
    </div>
  );
}

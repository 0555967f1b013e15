import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../../lib/toast.ts';
import { Modal } from './modal.tsx';

/**
 * Copies text to the clipboard with a success toast (`message`, or the common "copied" text); when the clipboard
 * refuses, `dialog` shows the text to copy by hand (spec 02 section 8). Render `dialog` once in the page.
 */
export function useCopy() {
  const { t } = useTranslation();
  const [manual, setManual] = useState<string | null>(null);
  const copy = async (text: string, message?: string) => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      toast.success(message ?? t('copy.done'));
    } catch {
      setManual(text);
    }
  };
  const dialog = (
    <Modal open={manual !== null} onClose={() => setManual(null)} title={t('error.copyFailed')}>
      <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-all rounded bg-gray-100 p-2 dark:bg-gray-800">
        {manual}
      </pre>
    </Modal>
  );
  return { copy, dialog };
}

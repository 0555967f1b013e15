import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Modal } from '../../components/ui/index.ts';
import { toast } from '../../lib/toast.ts';

/** Copies text; when the clipboard refuses, a dialog shows the text to copy by hand (spec 02 section 8). */
export function useCopy() {
  const { t } = useTranslation('tokens');
  const [manual, setManual] = useState<string | null>(null);
  const copy = async (text: string) => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      toast.success(t('copy.done'));
    } catch {
      setManual(text);
    }
  };
  const dialog = (
    <Modal open={manual !== null} onClose={() => setManual(null)} title={t('copy.failed')}>
      <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-all rounded bg-gray-100 p-2 dark:bg-gray-800">
        {manual}
      </pre>
    </Modal>
  );
  return { copy, dialog };
}

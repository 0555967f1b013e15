import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Modal } from '../../components/ui/index.ts';
import { toast } from '../../lib/toast.ts';

/** Copies text; when the clipboard is not available, a dialog shows the text to copy by hand. */
export function useCopy() {
  const { t } = useTranslation('users');
  const [manual, setManual] = useState<string | null>(null);
  const copy = async (text: string) => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      toast.success(t('personal.copied'));
    } catch {
      setManual(text);
    }
  };
  const dialog = (
    <Modal open={manual !== null} onClose={() => setManual(null)} title={t('personal.copyFailed')}>
      <code className="block break-all rounded bg-gray-100 p-2 dark:bg-gray-800">{manual}</code>
    </Modal>
  );
  return { copy, dialog };
}

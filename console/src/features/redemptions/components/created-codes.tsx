import { useTranslation } from 'react-i18next';
import { Button, Modal, Textarea } from '../../../components/ui/index.ts';

export interface CreatedCodesProps {
  /** The name the codes were created with and their keys; null when closed. */
  created: { name: string; keys: string[] } | null;
  onCopy: (text: string) => void;
  onDownload: () => void;
  onClose: () => void;
}

/** The codes just created: shown once in full, with copy and download-again buttons. */
export function CreatedCodes({ created, onCopy, onDownload, onClose }: CreatedCodesProps) {
  const { t } = useTranslation('redemptions');
  const keys = created?.keys ?? [];
  return (
    <Modal
      open={created !== null}
      onClose={onClose}
      size="lg"
      title={t('createdDialog.title', { count: keys.length })}
      footer={
        <>
          <Button variant="secondary" onClick={onDownload}>
            {t('createdDialog.download')}
          </Button>
          <Button variant="secondary" onClick={() => onCopy(keys.join('\n'))}>
            {t('createdDialog.copy')}
          </Button>
          <Button onClick={onClose}>{t('createdDialog.close')}</Button>
        </>
      }
    >
      <p className="mb-2 text-gray-600 dark:text-gray-400">
        {t('createdDialog.description', { name: created?.name ?? '' })}
      </p>
      <Textarea
        label={t('createdDialog.codes')}
        readOnly
        rows={Math.min(12, Math.max(3, keys.length))}
        value={keys.join('\n')}
        className="font-mono text-xs"
      />
    </Modal>
  );
}

import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';

/** Backup codes shown this once, with copy and download: the server keeps only their hashes. */
export function BackupCodeList({ codes }: { codes: string[] }) {
  const { t } = useTranslation('two-factor');
  const { copy, dialog } = useCopy();
  const text = codes.join('\n');
  const download = () => {
    const url = URL.createObjectURL(new Blob([`${text}\n`], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'backup-codes.txt';
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <div className="flex flex-col gap-2">
      <p className="text-sm text-amber-700 dark:text-amber-400">{t('backup.shownOnce')}</p>
      <ul
        aria-label={t('backup.title')}
        className="grid grid-cols-2 gap-1 rounded border border-gray-200 p-2 font-mono text-sm dark:border-gray-700"
      >
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <div className="flex gap-2">
        <Button size="sm" variant="secondary" onClick={() => void copy(text)}>
          {t('backup.copy')}
        </Button>
        <Button size="sm" variant="secondary" onClick={download}>
          {t('backup.download')}
        </Button>
      </div>
      {dialog}
    </div>
  );
}

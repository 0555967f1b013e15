import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Modal, Spinner } from '../../../components/ui/index.ts';
import { formatNumber, formatQuota, type QuotaDisplay } from '../../../lib/format.ts';
import { fetchLogUser } from '../api/logs.ts';

/** The card of the user a log row belongs to (admins, from the user name in the row). */
export function UserInfoDialog({
  id,
  display,
  onClose,
}: {
  id: number;
  display: QuotaDisplay;
  onClose: () => void;
}) {
  const { t } = useTranslation('logs');
  const info = useQuery({ queryKey: ['log-user', id], queryFn: () => fetchLogUser(id) });
  return (
    <Modal open onClose={onClose} title={t('userInfo.title')} size="sm">
      {info.data ? (
        <dl className="grid grid-cols-2 gap-2">
          <dt className="text-gray-500">{t('userInfo.username')}</dt>
          <dd>{info.data.username}</dd>
          <dt className="text-gray-500">{t('userInfo.quota')}</dt>
          <dd>{formatQuota(info.data.quota, display)}</dd>
          <dt className="text-gray-500">{t('userInfo.usedQuota')}</dt>
          <dd>{formatQuota(info.data.used_quota, display)}</dd>
          <dt className="text-gray-500">{t('userInfo.requests')}</dt>
          <dd>{formatNumber(info.data.request_count)}</dd>
        </dl>
      ) : info.isError ? (
        <p className="text-red-600">{t('userInfo.failed')}</p>
      ) : (
        <Spinner />
      )}
    </Modal>
  );
}

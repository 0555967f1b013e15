import { useNavigate } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { TwoFactorEnrolment } from '../../personal/components/two-factor-enrolment.tsx';
import { SIGNED_IN_PAGE } from '../use-sign-in.ts';
import { AuthCard } from './auth-card.tsx';

/**
 * /two-factor: where an administrator goes first when the site requires two-factor sign-in of administrators and
 * they have none (the login answer's `require_2fa_setup`, or any API call answering SECOND_FACTOR_REQUIRED).
 */
export function EnrolmentPage() {
  const { t } = useTranslation('two-factor');
  const navigate = useNavigate();
  return (
    <AuthCard title={t('required.title')}>
      <p className="mb-4 text-sm text-gray-600 dark:text-gray-300">{t('required.body')}</p>
      <TwoFactorEnrolment onEnabled={() => void navigate({ to: SIGNED_IN_PAGE })} />
    </AuthCard>
  );
}

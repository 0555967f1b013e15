import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, DialogFooter, Input, Modal } from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { formatQuota } from '../../../lib/format.ts';
import { setSessionUser } from '../../../lib/session.ts';
import { useStatus } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { useHumanCheck } from '../../auth/components/human-check.tsx';
import { RESEND_WAIT_SECONDS, useCountdown } from '../../auth/use-countdown.ts';
import { bindEmail, changePassword, deleteSelf, sendEmailCode, transferAff } from '../api/self.ts';
import {
  validateBindEmail,
  validateDeleteConfirm,
  validateEmailForCode,
  validatePasswordChange,
  validateTransfer,
} from '../validation.ts';

interface DialogProps {
  open: boolean;
  onClose: () => void;
}

const errorText = (err: unknown) => (err instanceof ApiError ? err.message : String(err));

export function TransferDialog({
  open,
  onClose,
  available,
  quotaPerUnit,
  onDone,
}: DialogProps & { available: number; quotaPerUnit: number; onDone: () => void }) {
  const { t } = useTranslation('users');
  const [amount, setAmount] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const problem = validateTransfer(amount, quotaPerUnit, available);
    setError(problem ? t(problem, { min: formatQuota(quotaPerUnit, { quotaPerUnit }) }) : null);
    if (problem) return;
    setBusy(true);
    try {
      await transferAff(Number(amount));
      toast.success(t('personal.transfer.done'));
      onDone();
      onClose();
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('personal.transfer.title')}
      footer={<DialogFooter onCancel={onClose} onOk={() => void submit()} busy={busy} />}
    >
      <p className="mb-2">
        {t('personal.transfer.available', { amount: formatQuota(available, { quotaPerUnit }) })}
      </p>
      <Input
        label={t('personal.transfer.amount')}
        type="number"
        value={amount}
        error={error}
        hint={t('personal.transfer.hint', { min: quotaPerUnit })}
        onChange={(e) => setAmount(e.target.value)}
      />
    </Modal>
  );
}

export function BindEmailDialog({ open, onClose, onDone }: DialogProps & { onDone: () => void }) {
  const { t } = useTranslation('users');
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const countdown = useCountdown(RESEND_WAIT_SECONDS);
  const { data: status } = useStatus();
  const humanCheck = useHumanCheck(status);
  const send = async () => {
    const problem = validateEmailForCode(email);
    setError(problem ? t(problem) : null);
    if (problem) return;
    if (humanCheck.pending) {
      setError(t('common:auth.humanCheckRunning'));
      return;
    }
    countdown.start();
    try {
      await sendEmailCode(email.trim(), humanCheck.query);
      toast.success(t('personal.email.codeSent'));
    } catch {
      // shown by the request client
    }
  };
  const submit = async () => {
    const problem = validateBindEmail(email, code);
    setError(problem ? t(problem) : null);
    if (problem) return;
    setBusy(true);
    try {
      await bindEmail(email.trim(), code.trim());
      toast.success(t('personal.email.bound'));
      onDone();
      onClose();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('personal.email.title')}
      footer={<DialogFooter onCancel={onClose} onOk={() => void submit()} busy={busy} />}
    >
      <div className="flex flex-col gap-3">
        <div className="flex items-end gap-2">
          <div className="flex-1">
            <Input
              label={t('personal.email.address')}
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          </div>
          <Button variant="secondary" disabled={countdown.left > 0} onClick={() => void send()}>
            {countdown.left > 0
              ? t('personal.email.resendIn', { seconds: countdown.left })
              : t('personal.email.sendCode')}
          </Button>
        </div>
        <Input label={t('personal.email.code')} value={code} onChange={(e) => setCode(e.target.value)} />
        {open ? humanCheck.widget : null}
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </Modal>
  );
}

export function ChangePasswordDialog({ open, onClose }: DialogProps) {
  const { t } = useTranslation('users');
  const [form, setForm] = useState({ original: '', password: '', password2: '' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const problem = validatePasswordChange(form);
    setError(problem ? t(problem) : null);
    if (problem) return;
    setBusy(true);
    try {
      await changePassword(form.original, form.password);
      toast.success(t('personal.password.done'));
      setForm({ original: '', password: '', password2: '' });
      onClose();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('personal.password.title')}
      footer={<DialogFooter onCancel={onClose} onOk={() => void submit()} busy={busy} />}
    >
      <div className="flex flex-col gap-3">
        <Input
          label={t('personal.password.original')}
          type="password"
          autoComplete="current-password"
          value={form.original}
          onChange={(e) => setForm({ ...form, original: e.target.value })}
        />
        <Input
          label={t('personal.password.new')}
          type="password"
          autoComplete="new-password"
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
        <Input
          label={t('personal.password.confirm')}
          type="password"
          autoComplete="new-password"
          value={form.password2}
          onChange={(e) => setForm({ ...form, password2: e.target.value })}
        />
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </Modal>
  );
}

export function DeleteAccountDialog({ open, onClose, username }: DialogProps & { username: string }) {
  const { t } = useTranslation('users');
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const problem = validateDeleteConfirm(typed, username);
    setError(problem ? t(problem) : null);
    if (problem) return;
    setBusy(true);
    try {
      await deleteSelf();
      toast.success(t('personal.delete.done'));
      setSessionUser(null);
      await navigate({ to: '/login' });
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open={open}
      onClose={onClose}
      title={t('personal.delete.title')}
      footer={
        <DialogFooter
          onCancel={onClose}
          onOk={() => void submit()}
          busy={busy}
          okText={t('personal.delete.submit')}
        />
      }
    >
      <p className="mb-2 text-red-600">{t('personal.delete.warning')}</p>
      <Input
        label={t('personal.delete.typeUsername', { username })}
        value={typed}
        error={error}
        onChange={(e) => setTyped(e.target.value)}
      />
    </Modal>
  );
}

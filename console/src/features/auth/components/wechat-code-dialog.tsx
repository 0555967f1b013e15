import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DialogFooter, Input, Modal } from '../../../components/ui/index.ts';
import { api } from '../../../lib/api.ts';
import type { SessionUser } from '../../../lib/session.ts';

/** The WeChat code is checked by the sign-in (answers the user) or by the binding of a signed-in user. */
export type WeChatEndpoint = '/api/oauth/wechat' | '/api/oauth/wechat/bind';

/**
 * WeChat sign-in and binding: the user scans the site's official-account QR code, gets a code from it, and types
 * it here. A refused code is shown in the dialog, which stays open for another try.
 */
export function WeChatCodeDialog({
  open,
  onClose,
  qrcode,
  endpoint,
  onDone,
}: {
  open: boolean;
  onClose: () => void;
  qrcode: string;
  endpoint: WeChatEndpoint;
  /** The server accepted the code; the sign-in answers the user, the binding nothing. */
  onDone: (user: SessionUser | undefined) => void;
}) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const close = () => {
    setError(null);
    onClose();
  };
  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    if (code.trim() === '') {
      setError(t('validation.codeRequired'));
      return;
    }
    setError(null);
    setBusy(true);
    try {
      const user = await api.get<SessionUser | undefined>(endpoint, {
        query: { code: code.trim() },
        silent: true,
      });
      setCode('');
      onDone(user);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      open={open}
      onClose={close}
      title={t(endpoint === '/api/oauth/wechat' ? 'wechat.title' : 'wechat.bindTitle')}
      size="sm"
      footer={<DialogFooter onCancel={close} onOk={() => void submit()} busy={busy} />}
    >
      <form className="flex flex-col items-center gap-3" noValidate onSubmit={(e) => void submit(e)}>
        {qrcode ? <img src={qrcode} alt={t('wechat.qrAlt')} className="h-40 w-40" /> : null}
        <p className="text-sm text-gray-600 dark:text-gray-300">{t('wechat.hint')}</p>
        <div className="w-full">
          <Input
            label={t('auth.verificationCode')}
            name="wechat_code"
            value={code}
            error={error}
            autoComplete="one-time-code"
            onChange={(e) => setCode(e.target.value)}
          />
        </div>
      </form>
    </Modal>
  );
}

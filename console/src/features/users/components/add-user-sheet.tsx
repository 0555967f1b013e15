import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DialogFooter, Input, SideSheet } from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { toast } from '../../../lib/toast.ts';
import { createUser } from '../api/users.ts';
import { validateNewUser } from '../rules.ts';

const empty = { username: '', display_name: '', password: '' };

/** The add-user side sheet: username, display name, password. */
export function AddUserSheet({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const { t } = useTranslation('users');
  const [form, setForm] = useState(empty);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const close = () => {
    setForm(empty);
    setError(null);
    onClose();
  };

  const submit = async (e?: FormEvent) => {
    e?.preventDefault();
    const problem = validateNewUser(form);
    setError(problem ? t(problem) : null);
    if (problem) return;
    setSaving(true);
    try {
      await createUser({ ...form, username: form.username.trim() });
      toast.success(t('add.done'));
      onCreated();
      close();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setSaving(false);
    }
  };

  return (
    <SideSheet
      open={open}
      onClose={close}
      title={t('add.title')}
      footer={
        <DialogFooter
          onCancel={close}
          onOk={() => void submit()}
          busy={saving}
          okText={t('common:common.submit')}
        />
      }
    >
      <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-3">
        <Input
          label={t('field.username')}
          value={form.username}
          onChange={(e) => setForm({ ...form, username: e.target.value })}
        />
        <Input
          label={t('field.displayName')}
          value={form.display_name}
          onChange={(e) => setForm({ ...form, display_name: e.target.value })}
        />
        <Input
          label={t('field.password')}
          type="password"
          autoComplete="new-password"
          value={form.password}
          hint={t('field.passwordHint')}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
        />
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </form>
    </SideSheet>
  );
}

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, PageSpinner } from '../../../components/ui/index.ts';
import { ApiError } from '../../../lib/api.ts';
import { getSessionUser, setSessionUser } from '../../../lib/session.ts';
import { toast } from '../../../lib/toast.ts';
import { fetchSelf, type SelfUser, selfQueryKey, updateSelf } from '../api/self.ts';
import { validateSelfEdit } from '../validation.ts';

function SelfEditForm({ user }: { user: SelfUser }) {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const [form, setForm] = useState({
    username: user.username,
    display_name: user.display_name,
    original: '',
    password: '',
    password2: '',
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateSelfEdit(form);
    setError(problem ? t(problem) : null);
    if (problem) return;
    const patch = {
      ...(form.username.trim() !== user.username ? { username: form.username.trim() } : {}),
      ...(form.display_name !== user.display_name ? { display_name: form.display_name } : {}),
      ...(form.password ? { password: form.password, original_password: form.original } : {}),
    };
    if (Object.keys(patch).length === 0) {
      toast.info(t('personal.selfEdit.nothingChanged'));
      return;
    }
    setBusy(true);
    try {
      await updateSelf(patch);
      toast.success(t('personal.selfEdit.saved'));
      // the top bar shows the stored user's names
      const stored = getSessionUser();
      if (stored)
        setSessionUser({
          ...stored,
          username: patch.username ?? stored.username,
          display_name: patch.display_name ?? stored.display_name,
        });
      setForm((f) => ({ ...f, original: '', password: '', password2: '' }));
      await queryClient.invalidateQueries({ queryKey: selfQueryKey });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate className="flex max-w-lg flex-col gap-3">
      <Input
        label={t('personal.selfEdit.username')}
        name="username"
        autoComplete="username"
        value={form.username}
        onChange={set('username')}
      />
      <Input
        label={t('personal.selfEdit.displayName')}
        name="display_name"
        value={form.display_name}
        onChange={set('display_name')}
      />
      <Input
        label={t('personal.password.original')}
        name="original_password"
        type="password"
        autoComplete="current-password"
        hint={t('personal.selfEdit.passwordHint')}
        value={form.original}
        onChange={set('original')}
      />
      <Input
        label={t('personal.password.new')}
        name="password"
        type="password"
        autoComplete="new-password"
        placeholder={t('common:auth.passwordPlaceholder')}
        value={form.password}
        onChange={set('password')}
      />
      <Input
        label={t('personal.password.confirm')}
        name="password2"
        type="password"
        autoComplete="new-password"
        value={form.password2}
        onChange={set('password2')}
      />
      {error ? (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <div className="flex gap-2">
        <Button type="submit" loading={busy}>
          {t('common:common.save')}
        </Button>
        <Link
          to="/personal"
          className="rounded-md px-3 py-2 text-sm text-blue-600 hover:underline dark:text-blue-400"
        >
          {t('personal.selfEdit.back')}
        </Link>
      </div>
    </form>
  );
}

/** /user/edit: the user edits their own username, display name and password (spec 01 section 6). */
export function SelfEditPage() {
  const { t } = useTranslation('users');
  const self = useQuery({ queryKey: selfQueryKey, queryFn: fetchSelf });
  return (
    <section className="flex flex-col gap-4">
      <h1 className="text-xl font-semibold">{t('personal.selfEdit.title')}</h1>
      {self.isPending ? (
        <PageSpinner />
      ) : self.data ? (
        <SelfEditForm user={self.data} />
      ) : (
        <p role="alert">{t('personal.loadFailed')}</p>
      )}
    </section>
  );
}

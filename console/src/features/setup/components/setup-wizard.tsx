import { Radio, RadioGroup } from '@headlessui/react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/button.tsx';
import { Input } from '../../../components/ui/input.tsx';
import { Modal } from '../../../components/ui/modal.tsx';
import { PageSpinner } from '../../../components/ui/spinner.tsx';
import { api } from '../../../lib/api.ts';
import { toast } from '../../../lib/toast.ts';
import { type SetupForm, type UsageMode, validateSetup } from '../validation.ts';

interface SetupStatus {
  status: boolean;
  root_init: boolean;
  database_type: 'postgres' | 'pglite';
}

/** Spec 03: reload 1.5 s after a successful setup so the whole console picks up the new status. */
export const SETUP_RELOAD_MS = 1500;

export function SetupWizard({ reload = () => window.location.assign('/') }: { reload?: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const query = useQuery({
    queryKey: ['setup'],
    queryFn: () => api.get<SetupStatus>('/api/setup', { silent: true }),
  });
  const [form, setForm] = useState<SetupForm>({ username: '', password: '', confirmPassword: '' });
  const [mode, setMode] = useState<UsageMode>('external');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);

  useEffect(() => {
    if (query.data?.status) void navigate({ to: '/' });
  }, [query.data?.status, navigate]);

  if (query.isPending) return <PageSpinner />;
  if (query.isError) {
    return (
      <p role="alert" className="p-8 text-center text-red-600">
        {t('setup.statusFailed')}
      </p>
    );
  }
  const setup = query.data;
  const set = (key: keyof SetupForm) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateSetup(form, setup.root_init);
    if (problem) {
      setError(t(problem));
      return;
    }
    setError(null);
    setBusy(true);
    try {
      await api.post(
        '/api/setup',
        {
          ...form,
          username: form.username.trim(),
          SelfUseModeEnabled: mode === 'self',
          DemoSiteEnabled: mode === 'demo',
        },
        { silent: true },
      );
      toast.success(t('setup.success'));
      setTimeout(reload, SETUP_RELOAD_MS);
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : t('setup.failed'));
      setBusy(false);
    }
  };

  const modes: Array<{ value: UsageMode; label: string }> = [
    { value: 'external', label: 'setup.modeExternal' },
    { value: 'self', label: 'setup.modeSelf' },
    { value: 'demo', label: 'setup.modeDemo' },
  ];
  return (
    <main className="mx-auto max-w-xl px-4 py-8">
      <h1 className="mb-6 text-2xl font-semibold">{t('setup.title')}</h1>
      {setup.database_type === 'pglite' ? (
        <div
          role="note"
          data-testid="db-warning"
          className="mb-6 rounded-md border border-yellow-400 bg-yellow-50 p-4 text-sm text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100"
        >
          <p className="font-semibold">{t('setup.dbWarningTitle')}</p>
          <p className="mt-1">{t('setup.dbWarning')}</p>
        </div>
      ) : null}
      <form onSubmit={(e) => void submit(e)} noValidate className="flex flex-col gap-6">
        <section className="flex flex-col gap-3">
          <h2 className="font-semibold">{t('setup.adminSection')}</h2>
          {setup.root_init ? (
            <p className="rounded-md bg-blue-50 p-3 text-sm text-blue-900 dark:bg-blue-950 dark:text-blue-100">
              {t('setup.adminReady')}
            </p>
          ) : (
            <>
              <Input
                label={t('setup.adminUsername')}
                name="username"
                autoComplete="username"
                value={form.username}
                onChange={set('username')}
              />
              <Input
                label={t('auth.password')}
                name="password"
                type="password"
                autoComplete="new-password"
                placeholder={t('auth.passwordPlaceholder')}
                value={form.password}
                onChange={set('password')}
              />
              <Input
                label={t('auth.confirmPassword')}
                name="confirmPassword"
                type="password"
                autoComplete="new-password"
                value={form.confirmPassword}
                onChange={set('confirmPassword')}
              />
            </>
          )}
        </section>
        <section className="flex flex-col gap-3">
          <div className="flex items-center gap-2">
            <h2 className="font-semibold">{t('setup.usageMode')}</h2>
            <button
              type="button"
              onClick={() => setHelpOpen(true)}
              className="text-sm text-blue-600 hover:underline"
            >
              {t('setup.modeHelp')}
            </button>
          </div>
          <RadioGroup
            value={mode}
            onChange={setMode}
            aria-label={t('setup.usageMode')}
            className="flex flex-col gap-2 sm:flex-row"
          >
            {modes.map((m) => (
              <Radio
                key={m.value}
                value={m.value}
                className="flex cursor-pointer items-center gap-2 rounded-md border border-gray-300 px-3 py-2 text-sm data-checked:border-blue-600 data-checked:bg-blue-50 dark:border-gray-600 dark:data-checked:bg-blue-950"
              >
                <span className="h-3 w-3 rounded-full border border-gray-400 in-data-checked:border-4 in-data-checked:border-blue-600" />
                {t(m.label)}
              </Radio>
            ))}
          </RadioGroup>
        </section>
        {error ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            {error}
          </p>
        ) : null}
        <Button type="submit" loading={busy}>
          {t('setup.submit')}
        </Button>
      </form>
      <Modal
        open={helpOpen}
        onClose={() => setHelpOpen(false)}
        title={t('setup.modeHelp')}
        footer={<Button onClick={() => setHelpOpen(false)}>{t('common.close')}</Button>}
      >
        <ul className="flex list-disc flex-col gap-2 pl-5">
          <li>{t('setup.helpExternal')}</li>
          <li>{t('setup.helpSelf')}</li>
          <li>{t('setup.helpDemo')}</li>
        </ul>
      </Modal>
    </main>
  );
}

import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Tag } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import type { OptionValues } from '../api/options.ts';
import type { OptionField } from '../option-fields.ts';
import { isValidJson, validateWellKnown, validateWhitelistDomain } from '../validation.ts';
import { OptionSection } from './option-section.tsx';

const sw = (key: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'switch',
  ...extra,
});
const tx = (key: string, extra: Partial<OptionField> = {}): OptionField => ({ key, kind: 'text', ...extra });
const secret = (key: string): OptionField => ({ key, kind: 'secret' });
const address = (key: string): OptionField => ({ key, kind: 'address' });

export const generalFields: OptionField[] = [address('ServerAddress')];
export const workerFields: OptionField[] = [address('WorkerUrl'), secret('WorkerValidKey')];
export const paymentFields: OptionField[] = [
  address('PayAddress'),
  address('CustomCallbackAddress'),
  tx('EpayId'),
  secret('EpayKey'),
  { key: 'Price', kind: 'number', min: 0 },
  { key: 'MinTopUp', kind: 'number', min: 1, integer: true },
  { key: 'TopupGroupRatio', kind: 'json' },
];
export const loginFields: OptionField[] = [
  sw('PasswordLoginEnabled', { confirmOff: 'confirm.passwordLoginOff' }),
  sw('AdminTwoFactorRequired'),
  sw('PasswordRegisterEnabled'),
  sw('EmailVerificationEnabled'),
  sw('RegisterEnabled'),
  sw('GitHubOAuthEnabled'),
  sw('LinuxDOOAuthEnabled'),
  sw('WeChatAuthEnabled'),
  sw('TelegramOAuthEnabled'),
  sw('oidc.enabled'),
  sw('TurnstileCheckEnabled'),
];
export const smtpFields: OptionField[] = [
  tx('SMTPServer'),
  { key: 'SMTPPort', kind: 'number', min: 1, max: 65535, integer: true },
  tx('SMTPAccount'),
  tx('SMTPFrom'),
  secret('SMTPToken'),
  sw('SMTPSSLEnabled'),
];
export const oidcFields: OptionField[] = [
  tx('oidc.client_id'),
  secret('oidc.client_secret'),
  tx('oidc.well_known'),
  tx('oidc.authorization_endpoint'),
  tx('oidc.token_endpoint'),
  tx('oidc.user_info_endpoint'),
];
export const githubFields: OptionField[] = [tx('GitHubClientId'), secret('GitHubClientSecret')];
export const linuxdoFields: OptionField[] = [tx('LinuxDOClientId'), secret('LinuxDOClientSecret')];
export const wechatFields: OptionField[] = [
  address('WeChatServerAddress'),
  secret('WeChatServerToken'),
  tx('WeChatAccountQRCodeImageURL'),
];
export const telegramFields: OptionField[] = [tx('TelegramBotName'), secret('TelegramBotToken')];
export const turnstileFields: OptionField[] = [tx('TurnstileSiteKey'), secret('TurnstileSecretKey')];
/** What a webhook a user sets may reach (docs/adr/0039); the server checks each range. */
export const fetchFields: OptionField[] = [
  sw('fetch_setting.enable_ssrf_protection', { confirmOff: 'confirm.ssrfProtectionOff' }),
  {
    key: 'fetch_setting.allowed_ranges',
    kind: 'textarea',
    hint: 'hint.allowedRanges',
    enabledBy: 'fetch_setting.enable_ssrf_protection',
  },
];

/** Fetches the OIDC discovery document and returns the three endpoints it names. */
export async function fetchOidcConfiguration(wellKnown: string): Promise<Record<string, string>> {
  const response = await fetch(wellKnown.trim());
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const doc = (await response.json()) as Record<string, unknown>;
  const pick = (k: string) => (typeof doc[k] === 'string' ? (doc[k] as string) : '');
  return {
    'oidc.authorization_endpoint': pick('authorization_endpoint'),
    'oidc.token_endpoint': pick('token_endpoint'),
    'oidc.user_info_endpoint': pick('userinfo_endpoint'),
  };
}

/** The email-domain whitelist: two switches and a list edited one domain at a time. */
function EmailWhitelistSection({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const [input, setInput] = useState('');
  const [error, setError] = useState<string | null>(null);
  const fields: OptionField[] = [
    sw('EmailDomainRestrictionEnabled'),
    sw('EmailAliasRestrictionEnabled'),
    { key: 'EmailDomainWhitelist', kind: 'text', hint: 'hint.whitelist' },
  ];
  return (
    <OptionSection
      title={t('section.whitelist')}
      fields={fields}
      values={values}
      extra={(draft, setField) => {
        const list = (draft.EmailDomainWhitelist ?? '')
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean);
        const add = () => {
          const problem = validateWhitelistDomain(input, list);
          setError(problem ? t(problem) : null);
          if (problem) return;
          setField('EmailDomainWhitelist', [...list, input.trim().toLowerCase()].join(','));
          setInput('');
        };
        return (
          <div className="flex flex-col gap-2">
            <div className="flex flex-wrap gap-1">
              {list.map((d) => (
                <Tag key={d} color="blue">
                  {d}
                  <button
                    type="button"
                    className="ml-1"
                    aria-label={t('whitelist.remove', { domain: d })}
                    onClick={() => setField('EmailDomainWhitelist', list.filter((x) => x !== d).join(','))}
                  >
                    ×
                  </button>
                </Tag>
              ))}
            </div>
            <div className="flex items-end gap-2">
              <Input
                label={t('whitelist.new')}
                value={input}
                error={error}
                onChange={(e) => setInput(e.target.value)}
              />
              <Button variant="secondary" onClick={add}>
                {t('whitelist.add')}
              </Button>
            </div>
          </div>
        );
      }}
    />
  );
}

/** System settings (root): every section of spec 01. Each section saves only its changed options. */
export function SystemSettings({ values }: { values: OptionValues }) {
  const { t } = useTranslation('settings');
  const [fetching, setFetching] = useState(false);
  return (
    <div className="flex flex-col gap-4">
      <OptionSection title={t('section.general')} fields={generalFields} values={values} />
      <OptionSection
        title={t('section.worker')}
        fields={workerFields}
        values={values}
        adjust={(changed, draft) =>
          // the key is sent only when typed, or (as empty) when the worker address is cleared
          (draft.WorkerUrl ?? '').trim() === '' &&
          (values.WorkerUrl ?? '') !== '' &&
          !changed.some(([k]) => k === 'WorkerValidKey')
            ? [...changed, ['WorkerValidKey', '']]
            : changed
        }
      />
      <OptionSection
        title={t('section.payment')}
        fields={paymentFields}
        values={values}
        validate={(draft, changed) => {
          if (!(values.ServerAddress ?? '').trim()) return 'payment.serverAddressRequired';
          if (changed.some(([k]) => k === 'TopupGroupRatio') && !isValidJson(draft.TopupGroupRatio ?? ''))
            return 'payment.topupGroupRatioJson';
          return null;
        }}
      />
      <OptionSection title={t('section.login')} fields={loginFields} values={values} />
      <EmailWhitelistSection values={values} />
      <OptionSection title={t('section.smtp')} fields={smtpFields} values={values} />
      <OptionSection
        title={t('section.oidc')}
        fields={oidcFields}
        values={values}
        validate={(draft, changed) =>
          changed.some(([k]) => k === 'oidc.well_known') && (draft['oidc.well_known'] ?? '').trim() !== ''
            ? validateWellKnown(draft['oidc.well_known'] ?? '')
            : null
        }
        extra={(draft, setField) => (
          <Button
            variant="secondary"
            loading={fetching}
            onClick={async () => {
              const problem = validateWellKnown(draft['oidc.well_known'] ?? '');
              if (problem) {
                toast.error(t(problem));
                return;
              }
              setFetching(true);
              try {
                const endpoints = await fetchOidcConfiguration(draft['oidc.well_known'] ?? '');
                for (const [k, v] of Object.entries(endpoints)) setField(k, v);
                toast.success(t('oidc.fetched'));
              } catch {
                toast.error(t('oidc.fetchFailed'));
              } finally {
                setFetching(false);
              }
            }}
          >
            {t('oidc.fetch')}
          </Button>
        )}
      />
      <OptionSection title={t('section.github')} fields={githubFields} values={values} />
      <OptionSection title={t('section.linuxdo')} fields={linuxdoFields} values={values} />
      <OptionSection title={t('section.wechat')} fields={wechatFields} values={values} />
      <OptionSection title={t('section.telegram')} fields={telegramFields} values={values} />
      <OptionSection title={t('section.turnstile')} fields={turnstileFields} values={values} />
      <OptionSection title={t('section.fetch')} fields={fetchFields} values={values} />
    </div>
  );
}

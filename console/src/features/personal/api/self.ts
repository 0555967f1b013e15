import { api } from '../../../lib/api.ts';

/** GET /api/user/self (spec 01 section 3); `setting` is JSON text without the webhook secret. */
export interface SelfUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  email: string;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_code: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  github_id: string;
  oidc_id: string;
  wechat_id: string;
  telegram_id: string;
  linux_do_id: string;
  access_token?: string;
  setting: string;
}

export interface NotifySetting {
  notify_type: 'email' | 'webhook';
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret: string;
  notification_email: string;
  accept_unset_model_ratio_model: boolean;
  has_webhook_secret?: boolean;
}

export const selfQueryKey = ['self'] as const;
export const fetchSelf = () => api.get<SelfUser>('/api/user/self');
export const fetchAffCode = () => api.get<string>('/api/user/aff');
export const transferAff = (quota: number) => api.post<void>('/api/user/aff_transfer', { quota });
export const generateAccessToken = () => api.get<string>('/api/user/token');
export const changePassword = (original_password: string, password: string) =>
  api.put<void>('/api/user/self', { original_password, password }, { silent: true });
/** PUT /api/user/self with only the fields that changed (a password needs the current one). */
export const updateSelf = (patch: {
  username?: string;
  display_name?: string;
  password?: string;
  original_password?: string;
}) => api.put<void>('/api/user/self', patch, { silent: true });
export const deleteSelf = () => api.delete<void>('/api/user/self');
export const saveNotifySetting = (setting: NotifySetting) => api.put<void>('/api/user/setting', setting);
/** Sends a verification code; `humanCheck` carries the Turnstile answer when the check is on. */
export const sendEmailCode = (email: string, humanCheck: { turnstile?: string } = {}) =>
  api.get<void>('/api/verification', { query: { email, ...humanCheck } });
export const bindEmail = (email: string, code: string) =>
  api.get<void>('/api/oauth/email/bind', { query: { email, code }, silent: true });

/** The user's setting JSON, with the defaults of spec 01 section 9. */
export function parseSetting(text: string | undefined): NotifySetting {
  let raw: Partial<NotifySetting> = {};
  try {
    raw = JSON.parse(text || '{}') as Partial<NotifySetting>;
  } catch {
    raw = {};
  }
  return {
    notify_type: raw.notify_type === 'webhook' ? 'webhook' : 'email',
    quota_warning_threshold: raw.quota_warning_threshold ?? 500000,
    webhook_url: raw.webhook_url ?? '',
    webhook_secret: '',
    notification_email: raw.notification_email ?? '',
    accept_unset_model_ratio_model: Boolean(raw.accept_unset_model_ratio_model),
    has_webhook_secret: Boolean(raw.has_webhook_secret),
  };
}

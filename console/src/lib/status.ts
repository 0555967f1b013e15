import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from './api.ts';
import { DEFAULT_QUOTA_PER_UNIT, type QuotaDisplay } from './format.ts';
import { readStored, readStoredJson, StorageKey, writeStored } from './storage.ts';

/** The public status object of GET /api/status (the fields the console reads). */
export interface SiteStatus {
  version: string;
  start_time: number;
  setup: boolean;
  system_name: string;
  logo: string;
  footer_html: string;
  server_address: string;
  price: number;
  min_topup: number;
  top_up_link: string;
  docs_link: string;
  quota_per_unit: number;
  display_in_currency: boolean;
  display_token_stat: boolean;
  enable_drawing: boolean;
  enable_task: boolean;
  enable_data_export: boolean;
  /** The dashboard's default granularity and range (DataExportDefaultTime). */
  data_export_default_time?: 'hour' | 'day' | 'week' | undefined;
  default_collapse_sidebar: boolean;
  enable_online_topup: boolean;
  mj_notify_enabled: boolean;
  chat_link: string;
  chat_link2: string;
  /** Saved chat front-ends, each a one-entry map of name to link template (the Chats option). */
  chats?: Array<Record<string, string>>;
  demo_site_enabled: boolean;
  self_use_mode_enabled: boolean;
  email_verification: boolean;
  register_enabled: boolean;
  password_login_enabled: boolean;
  password_register_enabled: boolean;
  turnstile_check: boolean;
  turnstile_site_key: string;
  github_oauth: boolean;
  github_client_id: string;
  linuxdo_oauth: boolean;
  linuxdo_client_id: string;
  telegram_oauth: boolean;
  telegram_bot_name: string;
  wechat_login: boolean;
  wechat_qrcode: string;
  oidc_enabled: boolean;
  oidc_client_id: string;
  oidc_authorization_endpoint: string;
  /** The release feed of the update check (UPDATE_CHECK_URL); empty or absent: no update check. */
  update_check_url?: string | undefined;
}

/** The status stored by the last load, so the first paint does not wait for the network. */
export function getCachedStatus(): SiteStatus | null {
  return readStoredJson<SiteStatus>(StorageKey.Status);
}

/**
 * Stores the status and the derived keys the spec lists (footer_html, enable_* flags, mj_notify_enabled, chats,
 * default_collapse_sidebar only when the visitor has not chosen yet).
 */
export function cacheStatus(status: SiteStatus): void {
  writeStored(StorageKey.Status, JSON.stringify(status));
  writeStored(StorageKey.FooterHtml, status.footer_html ?? '');
  writeStored(StorageKey.EnableDataExport, String(Boolean(status.enable_data_export)));
  writeStored(StorageKey.EnableDrawing, String(Boolean(status.enable_drawing)));
  writeStored(StorageKey.EnableTask, String(Boolean(status.enable_task)));
  writeStored(StorageKey.MjNotifyEnabled, String(Boolean(status.mj_notify_enabled)));
  writeStored(StorageKey.Chats, JSON.stringify(Array.isArray(status.chats) ? status.chats : []));
  if (readStored(StorageKey.CollapseSidebar) === null) {
    writeStored(StorageKey.CollapseSidebar, String(Boolean(status.default_collapse_sidebar)));
  }
  if (typeof document !== 'undefined' && status.system_name) document.title = status.system_name;
}

export async function fetchStatus(): Promise<SiteStatus> {
  const status = await request<SiteStatus>('GET', '/api/status', { silent: true });
  cacheStatus(status);
  return status;
}

export const statusQuery = queryOptions({
  queryKey: ['status'],
  queryFn: fetchStatus,
  staleTime: 60_000,
});

/** The status object: the cached copy at once, then the server's. */
export function useStatus() {
  const cached = getCachedStatus();
  return useQuery({ ...statusQuery, ...(cached ? { placeholderData: cached } : {}) });
}

/** How quota is shown on this site (QuotaPerUnit, DisplayInCurrencyEnabled), with the defaults until it loads. */
export function useQuotaDisplay(): Required<QuotaDisplay> {
  const status = useStatus();
  return {
    quotaPerUnit: status.data?.quota_per_unit ?? DEFAULT_QUOTA_PER_UNIT,
    inCurrency: status.data?.display_in_currency ?? true,
  };
}

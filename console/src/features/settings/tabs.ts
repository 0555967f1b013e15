/**
 * The tabs of /setting. Apart from the page so the route reads its search parameter without loading the page:
 * the route's own code is in the first download, the page comes when it is opened.
 */
export const SETTINGS_TABS = ['operation', 'ratelimit', 'models', 'system', 'other'] as const;
export type SettingsTab = (typeof SETTINGS_TABS)[number];

/** Normalises the `tab` query parameter (default `operation`). */
export function parseSettingsTab(value: unknown): SettingsTab {
  return (SETTINGS_TABS as readonly unknown[]).includes(value) ? (value as SettingsTab) : 'operation';
}

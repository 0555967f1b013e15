/**
 * The channel's `setting` JSON as form fields: `proxy` (the outbound proxy), `force_format` and
 * `thinking_to_content`, the keys the relay reads (relay/src/state/channel-cache.ts). The fields read and write the
 * same JSON text the "Extra settings" box shows, so keys the form has no field for (`headers`, ...) are kept.
 */
import { checkChannelJsonField } from '@turnpike/core/channels/channel-rules';

/** The setting keys with a form field. */
export interface ChannelSettingFields {
  proxy: string;
  force_format: boolean;
  thinking_to_content: boolean;
}

const parseObject = (text: string): Record<string, unknown> | null => {
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
};

/** The fields as the setting text holds them; null when the text is not a JSON object (the fields cannot edit it). */
export function readSettingFields(text: string): ChannelSettingFields | null {
  const setting = parseObject(text);
  if (!setting) return null;
  return {
    proxy: typeof setting.proxy === 'string' ? setting.proxy : '',
    force_format: setting.force_format === true,
    thinking_to_content: setting.thinking_to_content === true,
  };
}

/**
 * The setting text with one field changed. An empty proxy and a switch turned off drop their key, as the relay
 * reads a missing key the same way; nothing left gives an empty text. A text that is not a JSON object is returned
 * unchanged.
 */
export function writeSettingField<K extends keyof ChannelSettingFields>(
  text: string,
  key: K,
  value: ChannelSettingFields[K],
): string {
  const setting = parseObject(text);
  if (!setting) return text;
  const next: Record<string, unknown> = { ...setting };
  if (value === '' || value === false) delete next[key];
  else next[key] = value;
  return Object.keys(next).length === 0 ? '' : JSON.stringify(next, null, 2);
}

/** Blank (a direct connection) or an http, https or socks5 URL: the rule the API applies to `setting.proxy`. */
export function isProxyUrlAllowed(proxy: string): boolean {
  if (proxy.trim() === '') return true;
  return checkChannelJsonField('setting', JSON.stringify({ proxy: proxy.trim() })) === undefined;
}

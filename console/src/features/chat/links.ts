import { isRecord } from '@turnpike/core/json';
/**
 * Chat links (spec 02 sections 2, 4, 8 and 9): the Chats option is a list of one-entry maps, chat name to link
 * template; `{key}` becomes `sk-` plus the token key and `{address}` the URL-encoded server address.
 */

export interface ChatLink {
  name: string;
  template: string;
}

/** The saved links, or why there are none to use. */
export type ChatLinks = { kind: 'ok'; links: ChatLink[] } | { kind: 'invalid' };

/**
 * Reads the Chats list (as the status object carries it, or as the JSON text kept locally under `chats`).
 * Anything that is not a list of name-to-text maps is a configuration error.
 */
export function parseChatLinks(raw: unknown): ChatLinks {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { kind: 'ok', links: [] };
    try {
      value = JSON.parse(raw);
    } catch {
      return { kind: 'invalid' };
    }
  }
  if (value === null || value === undefined) return { kind: 'ok', links: [] };
  if (!Array.isArray(value)) return { kind: 'invalid' };
  const links: ChatLink[] = [];
  for (const entry of value) {
    if (!isRecord(entry)) return { kind: 'invalid' };
    const [pair] = Object.entries(entry);
    if (!pair || typeof pair[1] !== 'string') return { kind: 'invalid' };
    links.push({ name: pair[0], template: pair[1] });
  }
  return { kind: 'ok', links };
}

/**
 * The chat index of /chat/{id}: the route parameter as a whole number, 0 when it is left out, or null when it is
 * not a number.
 */
export function chatIndex(param: string | undefined): number | null {
  const text = (param ?? '').replace(/\/+$/, '');
  if (text === '') return 0;
  return /^\d+$/.test(text) ? Number(text) : null;
}

/** The key as chat front-ends expect it: always with the `sk-` prefix (the token list already adds it). */
export const apiKeyText = (key: string) => (key.startsWith('sk-') ? key : `sk-${key}`);

/** The address chat front-ends should call: the server address setting, else this page's origin. */
export function serverAddress(setting: string | undefined, origin: string): string {
  return (setting?.trim() || origin).replace(/\/+$/, '');
}

/** A link template with its placeholders filled; every occurrence is replaced. */
export function fillChatLink(template: string, key: string, address: string): string {
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', apiKeyText(key));
}

/**
 * The /chat2link target: the chat link template filled in when it has placeholders; a bare front-end address
 * gets the NextChat settings fragment (`#/?settings={"key":…,"url":…}`) that such links have always used.
 */
export function chat2Link(chatLink: string, key: string, address: string): string {
  const base = chatLink.trim();
  if (base.includes('{key}') || base.includes('{address}')) return fillChatLink(base, key, address);
  return `${base.replace(/\/+$/, '')}/#/?settings={"key":"${apiKeyText(key)}","url":"${encodeURIComponent(address)}"}`;
}

/** Web links load in the frame; an app link (opencat://…) can only be opened. */
export const isWebLink = (link: string) => /^https?:\/\//i.test(link);

/** A link that would run script in the console's origin if opened: never followed. */
export const isScriptLink = (link: string) => /^\s*(javascript|data|vbscript):/i.test(link);

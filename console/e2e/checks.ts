/**
 * What the browser tests read and check on a page: the translation tables (to find elements by the text a user
 * sees), untranslated keys, sideways scrolling on a phone, and errors a user would run into.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

export type Language = 'zh' | 'en';
export type Theme = 'light' | 'dark';
type Strings = Record<string, Record<string, string>>;

const localesDir = path.resolve(import.meta.dirname, '..', 'src', 'locales');
function loadStrings(language: Language): Strings {
  const dir = path.join(localesDir, language);
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(path.join(dir, f), 'utf8'))]),
  );
}
const strings: Record<Language, Strings> = { zh: loadStrings('zh'), en: loadStrings('en') };

/** The text a key shows in a language, e.g. text('zh', 'users', 'add.open'). */
export const text = (
  language: Language,
  namespace: string,
  key: string,
  vars: Record<string, string | number> = {},
) => {
  const raw = strings[language][namespace]?.[key];
  if (raw === undefined) throw new Error(`no ${language} text for ${namespace}:${key}`);
  return raw.replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(vars[name] ?? ''));
};

/** The English text of a key, the language the flows run in. */
export const en = (namespace: string, key: string, vars?: Record<string, string | number>) =>
  text('en', namespace, key, vars);

/** First segments of every translation key ("nav", "section", …): a text node like "section.quota" is a missing key. */
const keyPrefixes = [
  ...new Set(
    Object.values(strings.en).flatMap((table) => Object.keys(table).map((k) => k.split('.')[0] ?? '')),
  ),
];

/** Visible texts (and labels) that look like a translation key the page failed to translate. */
export async function untranslatedKeys(page: Page): Promise<string[]> {
  return page.evaluate((prefixes) => {
    const looksLikeKey = (s: string) => {
      const t = s.trim();
      return /^[a-z][A-Za-z]*(\.[A-Za-z_]+)+$/.test(t) && prefixes.includes(t.split('.')[0] ?? '');
    };
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode())
      if (looksLikeKey(node.textContent ?? '')) found.push((node.textContent ?? '').trim());
    for (const el of document.querySelectorAll('[placeholder],[title],[aria-label]'))
      for (const attr of ['placeholder', 'title', 'aria-label'])
        if (looksLikeKey(el.getAttribute(attr) ?? '')) found.push(`${attr}=${el.getAttribute(attr)}`);
    return found;
  }, keyPrefixes);
}

/** How far the page is wider than the window (a phone must not scroll sideways). */
export const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/**
 * The elements that stick out past the right edge of the window, as `tag.class-prefix` with their right edge, so a
 * failing phone check says what to fix.
 */
export const widestElements = (page: Page) =>
  page.evaluate(() =>
    [...document.body.querySelectorAll('*')]
      .map((el) => ({ el, right: Math.round(el.getBoundingClientRect().right) }))
      .filter(({ right }) => right > window.innerWidth)
      .slice(0, 5)
      .map(
        ({ el, right }) =>
          `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${String(el.className).slice(0, 60)} → ${right}px`,
      ),
  );

/**
 * Collects what a user would see go wrong on a page from now on: uncaught script errors, errors written to the
 * console, and answers of the server's own API (/api, /pg, /v1) with a 5xx status. A 4xx answer is the server
 * refusing input, which the page shows as a message (Chromium still logs it as a failed resource; not counted).
 */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) return;
    errors.push(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (/^\/(api|pg|v1)\//.test(url.pathname) && response.status() >= 500)
      errors.push(`${response.status()} ${response.request().method()} ${url.pathname}`);
  });
  return errors;
}

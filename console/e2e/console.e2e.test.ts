/**
 * The console of issue 5 in real headless Chromium against a freshly started server: the whole first-day journey
 * (setup → login → create a user → promote, disable, enable → change an option and see it after a reload → switch
 * language and theme → log out), then screenshots of the main screens in both languages, both themes, at desktop
 * and phone width, with checks for untranslated keys and for pages wider than a phone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  screenshot,
  startServer,
  Viewport,
} from './harness.ts';

type Language = 'zh' | 'en';
type Theme = 'light' | 'dark';
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
const text = (language: Language, namespace: string, key: string, vars: Record<string, string> = {}) => {
  const raw = strings[language][namespace]?.[key];
  if (raw === undefined) throw new Error(`no ${language} text for ${namespace}:${key}`);
  return raw.replace(/\{\{(\w+)\}\}/g, (_, name: string) => vars[name] ?? '');
};
/** First segments of every translation key ("nav", "section", …): a text node like "section.quota" is a missing key. */
const keyPrefixes = [
  ...new Set(
    Object.values(strings.en).flatMap((table) => Object.keys(table).map((k) => k.split('.')[0] ?? '')),
  ),
];

/** Visible texts (and labels) that look like a translation key the page failed to translate. */
async function untranslatedKeys(page: Page): Promise<string[]> {
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
const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

const root = { username: 'root', password: 'root-pass-12' };

describe('console in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    buildConsoleIfStale();
    server = await startServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function login(page: Page, language: Language) {
    await page.goto('/login');
    await page.locator('input[name=username]').fill(root.username);
    await page.locator('input[name=password]').fill(root.password);
    await page.getByRole('button', { name: text(language, 'common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');
  }

  const combos = (['zh', 'en'] as const).flatMap((language) =>
    (['light', 'dark'] as const).flatMap((theme) =>
      (['desktop', 'phone'] as const).map((width) => ({ language, theme, width })),
    ),
  );
  const shotName = (screen: string, c: { language: Language; theme: Theme; width: string }) =>
    `${screen}-${c.language}-${c.theme}-${c.width}`;

  it('sends every page of a fresh install to the setup wizard, in both languages and themes', async () => {
    for (const combo of combos) {
      const context = await newContext(browser, server.baseUrl, {
        language: combo.language,
        theme: combo.theme,
        viewport: Viewport[combo.width],
      });
      const page = await context.newPage();
      await page.goto('/personal');
      await page.waitForURL('**/setup');
      await page.getByTestId('db-warning').waitFor();
      expect(await page.locator('h1').textContent()).toBe(text(combo.language, 'common', 'setup.title'));
      expect(await untranslatedKeys(page)).toEqual([]);
      expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, shotName('setup', combo));
      await context.close();
    }
  });

  it('setup → login → create a user → promote, disable, enable → change an option → language, theme → log out', async () => {
    const context = await newContext(browser, server.baseUrl);
    const page = await context.newPage();
    const zh = (ns: string, key: string, vars?: Record<string, string>) => text('zh', ns, key, vars);

    // Setup, in Chinese (the default): the browser checks the form before sending it.
    await page.goto('/');
    await page.waitForURL('**/setup');
    await page.locator('input[name=username]').fill(root.username);
    await page.locator('input[name=password]').fill('short');
    await page.locator('input[name=confirmPassword]').fill('short');
    await page.getByRole('button', { name: zh('common', 'setup.submit') }).click();
    expect(await page.getByRole('alert').first().textContent()).toBe(zh('common', 'setup.passwordMin'));
    await page.locator('input[name=password]').fill(root.password);
    await page.locator('input[name=confirmPassword]').fill(root.password);
    await page.getByRole('button', { name: zh('common', 'setup.submit') }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 15_000 });

    // A visitor on a guarded page is sent to /login; signing in lands on /token.
    await page.goto('/user');
    await page.waitForURL('**/login');
    await login(page, 'zh');
    await page.getByTestId('side-menu').waitFor();

    // Create a user from the add sheet.
    await page.getByRole('link', { name: zh('common', 'menu.users') }).click();
    await page.getByRole('heading', { name: zh('users', 'title') }).waitFor();
    await page.getByRole('button', { name: zh('users', 'add.open') }).click();
    const sheet = page.getByRole('dialog');
    await sheet.getByLabel(zh('users', 'field.username')).fill('carol');
    await sheet.getByLabel(zh('users', 'field.password'), { exact: true }).fill('carol-pass-1');
    await sheet.getByRole('button', { name: zh('common', 'common.submit') }).click();
    const carol = page.locator('tr', { has: page.getByText('carol', { exact: true }) });
    await carol.waitFor();
    await carol.getByText(zh('users', 'role.common'), { exact: true }).waitFor();

    // Promote, disable, enable: each asks first, then the row shows what the server answered.
    const act = async (action: string) => {
      await carol.getByRole('button', { name: `${zh('users', `action.${action}`)} carol` }).click();
      await page
        .getByRole('dialog')
        .getByRole('button', { name: zh('common', 'common.confirm') })
        .click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
    };
    await act('promote');
    await carol.getByText(zh('users', 'role.admin'), { exact: true }).waitFor();
    await act('disable');
    await carol.getByText(zh('users', 'status.banned'), { exact: true }).waitFor();
    await act('enable');
    await carol.getByText(zh('users', 'status.active'), { exact: true }).waitFor();
    await page.reload();
    await carol.getByText(zh('users', 'role.admin'), { exact: true }).waitFor();
    await carol.getByText(zh('users', 'status.active'), { exact: true }).waitFor();

    // Change an option; after a reload the form and the top bar show it.
    await page.goto('/setting?tab=other');
    const branding = page.getByRole('region', { name: zh('settings', 'section.branding') });
    await branding.getByLabel(zh('settings', 'field.SystemName')).fill('Gate E2E');
    await branding
      .getByRole('button', {
        name: zh('settings', 'save.button', { section: zh('settings', 'section.branding') }),
      })
      .click();
    await page.getByText(zh('settings', 'save.saved'), { exact: true }).waitFor();
    await page.reload();
    const reloaded = page.getByRole('region', { name: zh('settings', 'section.branding') });
    await reloaded.waitFor();
    expect(await reloaded.getByLabel(zh('settings', 'field.SystemName')).inputValue()).toBe('Gate E2E');
    await page.locator('header').getByText('Gate E2E').waitFor();

    // Saving the same section untouched sends nothing and says so.
    await reloaded
      .getByRole('button', {
        name: zh('settings', 'save.button', { section: zh('settings', 'section.branding') }),
      })
      .click();
    await page.getByText(zh('settings', 'save.nothingChanged'), { exact: true }).waitFor();

    // English, then dark; both survive a reload.
    await page.getByTestId('language-menu').click();
    await page.getByRole('menuitem', { name: 'English' }).click();
    await page.getByRole('tab', { name: text('en', 'settings', 'tab.other') }).waitFor();
    await page.getByTestId('theme-switch').click();
    await page.reload();
    await page.getByRole('tab', { name: text('en', 'settings', 'tab.other') }).waitFor();
    expect(await page.evaluate(() => document.documentElement.classList.contains('dark'))).toBe(true);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');

    // Sign out: the stored user is gone and guarded pages are closed again.
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: text('en', 'common', 'nav.logout') }).click();
    await page.waitForURL('**/login');
    expect(await page.evaluate(() => localStorage.getItem('user'))).toBeNull();
    await page.goto('/setting');
    await page.waitForURL('**/login');
    await context.close();
  });

  it('a user edits the profile and generates an access token that the API accepts', async () => {
    // an admin creates dave through the API, as the console would
    const signIn = await fetch(`${server.baseUrl}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(root),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const rootId = String(((await signIn.json()) as { data: { id: number } }).data.id);
    const created = await fetch(`${server.baseUrl}/api/user/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'New-Api-User': rootId },
      body: JSON.stringify({ username: 'dave', password: 'dave-pass-12', display_name: '' }),
    });
    expect(((await created.json()) as { success: boolean }).success).toBe(true);

    const en = (ns: string, key: string) => text('en', ns, key);
    const context = await newContext(browser, server.baseUrl, { language: 'en' });
    const page = await context.newPage();
    await page.goto('/login');
    await page.locator('input[name=username]').fill('dave');
    await page.locator('input[name=password]').fill('dave-pass-12');
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');

    // /user/edit: a new display name shows in the top bar at once
    await page.goto('/personal');
    await page.getByRole('link', { name: en('users', 'personal.selfEdit.open') }).click();
    await page.waitForURL('**/user/edit');
    await page.getByLabel(en('users', 'personal.selfEdit.displayName')).fill('Dave D.');
    await page.getByRole('button', { name: en('common', 'common.save') }).click();
    await page.getByText(en('users', 'personal.selfEdit.saved')).waitFor();
    await page.getByTestId('user-menu').getByText('Dave D.').waitFor();

    // the access token is generated after a confirmation and works as the API's Authorization
    await page.goto('/personal');
    await page.getByRole('button', { name: en('users', 'personal.token.generate') }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: en('personal', 'token.confirm') })
      .click();
    const tokenField = page.getByLabel(en('users', 'personal.token.label'));
    await tokenField.waitFor();
    const token = await tokenField.inputValue();
    expect(token.length).toBeGreaterThanOrEqual(16);
    const userId = await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? '{}').id as number);
    const self = await fetch(`${server.baseUrl}/api/user/self`, {
      headers: { Authorization: token, 'New-Api-User': String(userId) },
    });
    const body = (await self.json()) as {
      success: boolean;
      data: { username: string; display_name: string };
    };
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({ username: 'dave', display_name: 'Dave D.' });
    await context.close();
  });

  it('renders the main screens in zh and en, light and dark, at 1280 and 375 px', async () => {
    const settingsTabs = ['operation', 'ratelimit', 'models', 'system', 'other'] as const;
    for (const combo of combos) {
      const { language } = combo;
      const context = await newContext(browser, server.baseUrl, {
        language,
        theme: combo.theme,
        viewport: Viewport[combo.width],
      });
      const page = await context.newPage();
      const check = async (screen: string) => {
        await page.waitForLoadState('networkidle');
        expect(await untranslatedKeys(page), `${screen} ${language}`).toEqual([]);
        if (combo.width === 'phone')
          expect(await sidewaysOverflow(page), `${screen} is wider than the phone`).toBeLessThanOrEqual(0);
        await screenshot(page, shotName(screen, combo));
      };

      await page.goto('/');
      await page.getByRole('link', { name: text(language, 'common', 'nav.login') }).waitFor();
      await check('home');
      await page.goto('/login');
      await page.locator('input[name=username]').waitFor();
      await check('login');
      await login(page, language);

      await page.goto('/personal');
      await page.getByTestId('balance').waitFor();
      await check('personal');
      await page.goto('/user/edit');
      await page.getByRole('heading', { name: text(language, 'users', 'personal.selfEdit.title') }).waitFor();
      await check('profile');
      await page.goto('/user');
      await page.getByRole('heading', { name: text(language, 'users', 'title') }).waitFor();
      await page.locator('tbody tr').first().waitFor();
      await check('users');
      for (const tab of settingsTabs) {
        await page.goto(`/setting?tab=${tab}`);
        await page
          .getByRole('tab', { name: text(language, 'settings', `tab.${tab}`), selected: true })
          .waitFor();
        await page.locator('section[aria-label]').first().waitFor();
        await check(`settings-${tab}`);
      }
      await page.goto('/setting?tab=operation');
      await page.getByRole('tab', { name: text(language, 'settings', 'ratioTab.visual') }).click();
      await page.locator('table').last().waitFor();
      await check('settings-pricing-editor');
      if (combo.width === 'phone') {
        // the side menu is a drawer behind a button on a phone
        expect(await page.getByTestId('side-menu').count()).toBe(0);
        await page.getByTestId('mobile-menu').click();
        await page.getByTestId('side-menu').waitFor();
        await screenshot(page, shotName('menu', combo));
      }
      await context.close();
    }
  });

  it('shows the not-found page for an unknown address', async () => {
    for (const language of ['zh', 'en'] as const) {
      const context = await newContext(browser, server.baseUrl, { language });
      const page = await context.newPage();
      await page.goto('/no/such/page');
      await page.getByRole('heading', { name: text(language, 'common', 'notFound.title') }).waitFor();
      await screenshot(page, `not-found-${language}-light-desktop`);
      await context.close();
    }
  });
});

/**
 * The console in real headless Chromium against a freshly started server: the whole first-day journey of issue 5
 * (setup → login → create a user → promote, disable, enable → change an option and see it after a reload → switch
 * language and theme → log out), then screenshots of every screen (with a channel on a fake OpenAI upstream, a
 * token, redemption codes and a billed call behind the tables) in both languages, both themes, at desktop and
 * phone width, with checks for untranslated keys and for pages wider than a phone. The journeys of issue 6 are in
 * operations.e2e.test.ts.
 */
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, seedOperations, setOption, signIn } from './api.ts';
import {
  type Language,
  sidewaysOverflow,
  type Theme,
  text,
  untranslatedKeys,
  widestElements,
} from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  screenshot,
  startServer,
  Viewport,
} from './harness.ts';

const root = { username: 'root', password: 'root-pass-12' };

describe('console in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let upstream: FakeOpenAi;

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, browser, upstream] = await Promise.all([startServer(), launchBrowser(), startFakeOpenAi()]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.stop(), upstream?.close()]);
  });

  async function login(page: Page, language: Language) {
    await page.goto('/login');
    await page.locator('input[name=username]').fill(root.username);
    await page.locator('input[name=password]').fill(root.password);
    await page.getByRole('button', { name: text(language, 'common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');
  }

  /**
   * Every pair of language, theme and width is seen once (4 walks instead of all 8): a missing translation shows in
   * either theme, a page wider than a phone in either language or theme, so the full product adds only minutes.
   */
  const combos = [
    { language: 'zh', theme: 'light', width: 'desktop' },
    { language: 'zh', theme: 'dark', width: 'phone' },
    { language: 'en', theme: 'light', width: 'phone' },
    { language: 'en', theme: 'dark', width: 'desktop' },
  ] as const;
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

  /** A chat front-end the Chats option links to; the browser never reaches it (see chatRoutes). */
  const chatHost = 'https://chat.example.test';
  /**
   * Answers for the chat front-end: a page inside the /chat frame, and "204 No Content" for /chat2link leaving the
   * console, which keeps the browser on the redirect page so it can be photographed.
   */
  const chatRoutes = (context: BrowserContext) =>
    context.route(`${chatHost}/**`, (route) =>
      route.request().isNavigationRequest() && route.request().frame().parentFrame() === null
        ? route.fulfill({ status: 204 })
        : route.fulfill({
            contentType: 'text/html',
            body: '<h1 style="font:24px sans-serif">Chat front-end</h1>',
          }),
    );

  const settingsTabs = ['operation', 'ratelimit', 'models', 'system', 'other'] as const;
  let seeded: Promise<void> | undefined;
  /**
   * What the operations screens list, made once: a tested channel, a token, codes, a billed call, a chat link. The
   * dashboard counters are written every minute, so the last test finds the call in the dashboard.
   */
  const seed = () => {
    seeded ??= (async () => {
      const api = await signIn(server.baseUrl, root);
      await setOption(api, 'DataExportEnabled', 'true');
      await setOption(api, 'DataExportInterval', '1');
      await seedOperations(server.baseUrl, api, upstream.url);
      await setOption(api, 'Chats', JSON.stringify([{ 'Chat UI': `${chatHost}/?key={key}&url={address}` }]));
      // every user of the default group (root too) has a budget window, which the wallet shows
      await setOption(
        api,
        'GroupQuotaWindows',
        '{"default":[{"unit":"quota","limit":500000000,"period":"month"}]}',
      );
    })();
    return seeded;
  };

  /** A signed-out page in one language, theme and width, with the checks every screen must pass. */
  async function openCombo(combo: { language: Language; theme: Theme; width: 'desktop' | 'phone' }) {
    const { language } = combo;
    const context = await newContext(browser, server.baseUrl, {
      language,
      theme: combo.theme,
      viewport: Viewport[combo.width],
    });
    await chatRoutes(context);
    const page = await context.newPage();
    const check = async (screen: string, { fullPage = true } = {}) => {
      await page.waitForLoadState('networkidle');
      expect.soft(await untranslatedKeys(page), `${screen} ${language}`).toEqual([]);
      if (combo.width === 'phone') {
        const overflow = await sidewaysOverflow(page);
        const culprits = overflow > 0 ? await widestElements(page) : [];
        expect
          .soft(overflow, `${screen} is wider than the phone: ${culprits.join(', ')}`)
          .toBeLessThanOrEqual(0);
      }
      await screenshot(page, shotName(screen, combo), { fullPage });
    };
    /** Opens a drawer or dialog, photographs the window with it, and closes it again. */
    const checkDialog = async (screen: string, open: () => Promise<void>, title: string) => {
      await open();
      const dialog = page.getByRole('dialog', { name: title });
      // the dialog element itself has no size (its panel is fixed to the window): wait for its title
      await dialog.getByRole('heading', { name: title }).waitFor();
      await check(screen, { fullPage: false });
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    };
    const t = (ns: string, key: string, vars?: Record<string, string>) => text(language, ns, key, vars);
    return { context, page, check, checkDialog, t };
  }

  // one test per combination (each takes about 25 s); a failed check is reported and the run goes on
  for (const combo of combos) {
    it(`renders every screen in ${combo.language}, ${combo.theme}, at ${Viewport[combo.width].width} px`, async () => {
      await seed();
      const { language } = combo;
      const { context, page, check, checkDialog, t } = await openCombo(combo);

      await page.goto('/');
      await page.getByRole('link', { name: t('common', 'nav.login') }).waitFor();
      await check('home');
      await page.goto('/login');
      await page.locator('input[name=username]').waitFor();
      await check('login');
      await login(page, language);

      await page.goto('/personal');
      await page.getByTestId('balance').waitFor();
      await check('personal');
      await page.goto('/user/edit');
      await page.getByRole('heading', { name: t('users', 'personal.selfEdit.title') }).waitFor();
      await check('profile');
      await page.goto('/user');
      await page.getByRole('heading', { name: t('users', 'title') }).waitFor();
      await page.locator('tbody tr').first().waitFor();
      await check('users');
      for (const tab of settingsTabs) {
        await page.goto(`/setting?tab=${tab}`);
        await page.getByRole('tab', { name: t('settings', `tab.${tab}`), selected: true }).waitFor();
        await page.locator('section[aria-label]').first().waitFor();
        await check(`settings-${tab}`);
      }
      await page.goto('/setting?tab=operation');
      await page.getByRole('tab', { name: t('settings', 'ratioTab.visual') }).click();
      await page.locator('table').last().waitFor();
      await check('settings-pricing-editor');

      // operations (spec 02)
      await page.goto('/channel');
      const channel = page.locator('tr', { has: page.getByText('fake-openai', { exact: true }) });
      await channel
        .getByText(/\d\.\d\d/)
        .first()
        .waitFor();
      await check('channels');
      await checkDialog(
        'channel-drawer',
        () => page.getByRole('button', { name: t('channels', 'toolbar.add') }).click(),
        t('channels', 'drawer.createTitle'),
      );
      await checkDialog(
        'channel-model-test',
        () =>
          channel
            .getByRole('button', { name: t('channels', 'action.pickModelOf', { name: 'fake-openai' }) })
            .click(),
        t('channels', 'testModel.title', { name: 'fake-openai' }),
      );
      await page.goto('/token');
      const token = page.locator('tr', { has: page.getByText('my-app', { exact: true }) });
      // whether the seeded call is counted yet is the relay's business: any number used of the 1,000
      const spent = t('quota-windows', 'spent.requests.rolling', {
        used: 'USED',
        limit: '1,000',
        hours: '5',
      });
      await token
        .getByText(new RegExp(spent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('USED', '\\d+')))
        .waitFor();
      await check('tokens');
      await checkDialog(
        'token-drawer',
        () => page.getByRole('button', { name: t('tokens', 'add') }).click(),
        t('tokens', 'sheet.createTitle'),
      );
      await page.goto('/log');
      await page.locator('tbody tr').first().waitFor();
      await check('logs');
      await page.goto('/redemption');
      await page.locator('tbody tr').first().waitFor();
      await check('redemption');
      await checkDialog(
        'redemption-drawer',
        () => page.getByRole('button', { name: t('redemptions', 'add') }).click(),
        t('redemptions', 'sheet.createTitle'),
      );
      await page.goto('/topup');
      await page.getByTestId('wallet-balance').waitFor();
      await page
        .getByRole('region', { name: t('quota-windows', 'wallet.title') })
        .getByText(t('quota-windows', 'wallet.group', { group: 'default' }))
        .waitFor();
      await check('topup');
      await page.goto('/chat/0');
      await page.frameLocator('iframe[title="Chat UI"]').getByText('Chat front-end').waitFor();
      await check('chat');
      await page.goto('/chat2link');
      await page.getByText(t('chat', 'redirecting')).waitFor();
      await check('chat2link');

      // tasks, discovery (spec 03)
      await page.goto('/pricing');
      await page.getByRole('button', { name: 'gpt-4o-mini', exact: true }).waitFor();
      await check('pricing');
      await page.goto('/playground');
      await page.getByRole('log').getByTestId('message').nth(1).waitFor();
      await check('playground');
      await page.goto('/midjourney');
      await page.getByRole('heading', { name: t('tasks', 'drawing.title') }).waitFor();
      await check('midjourney');
      await page.goto('/task');
      await page.getByRole('heading', { name: t('tasks', 'task.title') }).waitFor();
      await check('task');

      if (combo.width === 'phone') {
        // the side menu is a drawer behind a button on a phone
        expect(await page.getByTestId('side-menu').count()).toBe(0);
        await page.getByTestId('mobile-menu').click();
        await page.getByTestId('side-menu').waitFor();
        await screenshot(page, shotName('menu', combo));
      }
      await context.close();
    });
  }

  it('renders the dashboard with the usage of the seeded call in every combination', async () => {
    await seed();
    const api = await signIn(server.baseUrl, root);
    const since = Math.floor(Date.now() / 1000) - 86_400;
    await eventually(
      () => api.ok<unknown[]>('GET', `/api/data/?start_timestamp=${since}`),
      (rows) => rows.length > 0,
      { timeoutMs: 90_000, what: 'the dashboard counters (written once a minute)' },
    );
    for (const combo of combos) {
      const { context, page, check, t } = await openCombo(combo);
      await login(page, combo.language);
      await page.goto('/detail');
      await page.getByText(t('dashboard', 'card.quota')).waitFor();
      await check('detail');
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

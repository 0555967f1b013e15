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

const admin = { username: 'admin', password: 'admin-pass-1' };

describe('console shell in a real browser', () => {
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

  async function login(page: Page) {
    await page.goto('/login');
    await page.locator('input[name=username]').fill(admin.username);
    await page.locator('input[name=password]').fill(admin.password);
    await page.locator('form button[type=submit]').click();
    await page.waitForURL('**/token');
  }

  it('sets up, signs in, sees the console, switches language and theme, signs out', async () => {
    const context = await newContext(browser, server.baseUrl);
    const page = await context.newPage();

    // A fresh install sends every page to /setup, which warns about the embedded database.
    await page.goto('/token');
    await page.waitForURL('**/setup');
    await page.getByTestId('db-warning').waitFor();
    expect(await page.locator('h1').textContent()).toBe('系统初始化');
    await screenshot(page, 'setup-zh-light-desktop');

    // Validation runs in the browser before anything is sent.
    await page.locator('input[name=username]').fill(admin.username);
    await page.locator('input[name=password]').fill('short');
    await page.locator('input[name=confirmPassword]').fill('short');
    await page.locator('form button[type=submit]').click();
    expect(await page.getByRole('alert').first().textContent()).toBe('密码长度至少为 8 个字符');

    await page.locator('input[name=password]').fill(admin.password);
    await page.locator('input[name=confirmPassword]').fill(admin.password);
    await page.locator('form button[type=submit]').click();
    // success reloads to / after 1.5 s
    await page.waitForURL((url) => url.pathname === '/', { timeout: 15_000 });

    // A visitor on a guarded page goes to /login.
    await page.goto('/token');
    await page.waitForURL('**/login');
    await screenshot(page, 'login-zh-light-desktop');

    await login(page);
    await page.getByTestId('side-menu').waitFor();
    await page.getByRole('link', { name: '用户管理' }).waitFor();
    await screenshot(page, 'console-zh-light-desktop');

    // English
    await page.getByTestId('language-menu').click();
    await page.getByRole('menuitem', { name: 'English' }).click();
    await page.getByRole('link', { name: 'User management' }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem('i18nextLng'))).toBe('en');
    await screenshot(page, 'console-en-light-desktop');

    // Dark, and it survives a reload
    await page.getByTestId('theme-switch').click();
    expect(await page.evaluate(() => document.documentElement.classList.contains('dark'))).toBe(true);
    await page.reload();
    await page.getByTestId('side-menu').waitFor();
    expect(await page.evaluate(() => document.documentElement.classList.contains('dark'))).toBe(true);
    await page.getByRole('link', { name: 'User management' }).waitFor();
    await screenshot(page, 'console-en-dark-desktop');

    // Sign out: back to /login, and the guarded page is closed again.
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    expect(await page.evaluate(() => localStorage.getItem('user'))).toBeNull();
    await page.goto('/token');
    await page.waitForURL('**/login');
    await screenshot(page, 'login-en-dark-desktop');
    await context.close();
  });

  it('works at 375 px in both languages and themes', async () => {
    for (const [language, theme] of [
      ['zh', 'light'],
      ['en', 'dark'],
    ] as const) {
      const context = await newContext(browser, server.baseUrl, {
        viewport: Viewport.phone,
        language,
        theme,
      });
      const page = await context.newPage();
      await page.goto('/');
      await screenshot(page, `home-${language}-${theme}-phone`);
      await login(page);
      // on a phone the side menu is a drawer behind a button
      await expect(page.getByTestId('side-menu').count()).resolves.toBe(0);
      await page.getByTestId('mobile-menu').click();
      await page.getByTestId('side-menu').waitFor();
      await screenshot(page, `console-${language}-${theme}-phone`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await context.close();
    }
  });

  it('shows the not-found page for an unknown address', async () => {
    const context = await newContext(browser, server.baseUrl, { language: 'en' });
    const page = await context.newPage();
    await page.goto('/no/such/page');
    await page.getByText('Page not found').waitFor();
    await screenshot(page, 'not-found-en-light-desktop');
    await context.close();
  });
});

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

const root = { username: 'root', password: 'root-pass-12' };

/** Personal settings, user management and settings against a real server (issue 5 screens of helper G). */
describe('admin screens in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    buildConsoleIfStale();
    server = await startServer();
    const answer = await fetch(`${server.baseUrl}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...root, confirmPassword: root.password }),
    });
    expect(answer.ok).toBe(true);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function login(page: Page) {
    await page.goto('/login');
    await page.locator('input[name=username]').fill(root.username);
    await page.locator('input[name=password]').fill(root.password);
    await page.locator('form button[type=submit]').click();
    await page.waitForURL('**/token');
  }

  const userRow = (page: Page, name: string) =>
    page.locator('tr', { has: page.getByText(name, { exact: true }) });

  it('creates a user, promotes, disables and enables it, and saves an option that survives a reload', async () => {
    const context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
    const page = await context.newPage();
    await login(page);

    await page.goto('/user');
    await page.getByRole('heading', { name: 'User management' }).waitFor();
    await page.getByRole('button', { name: 'Add user' }).click();
    const sheet = page.getByRole('dialog');
    await sheet.getByLabel('Username').fill('carol');
    await sheet.getByLabel('Password').fill('carol-pass-1');
    await sheet.getByRole('button', { name: 'Submit' }).click();
    await userRow(page, 'carol').waitFor();

    await userRow(page, 'carol').getByRole('button', { name: 'Promote carol' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await userRow(page, 'carol').getByText('Admin', { exact: true }).waitFor();

    await userRow(page, 'carol').getByRole('button', { name: 'Disable carol' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await userRow(page, 'carol').getByText('Banned').waitFor();

    await userRow(page, 'carol').getByRole('button', { name: 'Enable carol' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await userRow(page, 'carol').getByText('Active').waitFor();
    await screenshot(page, 'users-en-light-desktop');

    // the state is the server's: a reload shows the same
    await page.reload();
    await userRow(page, 'carol').getByText('Admin', { exact: true }).waitFor();
    await userRow(page, 'carol').getByText('Active').waitFor();

    await page.goto('/setting?tab=other');
    const branding = page.getByRole('region', { name: 'Name and logo' });
    await branding.getByLabel('System name').fill('Gate E2E');
    await branding.getByRole('button', { name: 'Save Name and logo' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    await page.reload();
    await page.getByRole('region', { name: 'Name and logo' }).waitFor();
    expect(
      await page.getByRole('region', { name: 'Name and logo' }).getByLabel('System name').inputValue(),
    ).toBe('Gate E2E');
    await screenshot(page, 'settings-other-en-light-desktop');

    await page.goto('/setting?tab=operation');
    await page.getByRole('region', { name: 'Quota' }).waitFor();
    await screenshot(page, 'settings-operation-en-light-desktop');

    await page.goto('/personal');
    await page.getByTestId('balance').waitFor();
    await screenshot(page, 'personal-en-light-desktop');
    await context.close();
  });

  it('renders the screens in Chinese and dark, on a phone', async () => {
    for (const [name, viewport] of Object.entries(Viewport)) {
      const context = await newContext(browser, server.baseUrl, { language: 'zh', theme: 'dark', viewport });
      const page = await context.newPage();
      await login(page);
      await page.goto('/user');
      await page.getByRole('heading', { name: '用户管理' }).waitFor();
      await screenshot(page, `users-zh-dark-${name}`);
      await page.goto('/setting?tab=system');
      await page.getByRole('region', { name: '配置 SMTP' }).waitFor();
      await screenshot(page, `settings-system-zh-dark-${name}`);
      await page.goto('/personal');
      await page.getByTestId('balance').waitFor();
      await screenshot(page, `personal-zh-dark-${name}`);
      await context.close();
    }
  });
});

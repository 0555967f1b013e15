/**
 * Passkeys and two-factor sign-in in real headless Chromium with a virtual authenticator (the DevTools protocol's
 * WebAuthn domain: https://chromedevtools.github.io/devtools-protocol/tot/WebAuthn/), against a fresh all-in-one
 * server. The page is opened at http://localhost:<port>, the host name the server address names: WebAuthn needs a
 * secure context and a domain for its relying party, which localhost is and 127.0.0.1 is not.
 */
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, ROOT, setOption, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  screenshot,
  startServer,
} from './harness.ts';

const ALICE = { username: 'alice', password: 'alice-pass-1' };

describe('passkeys in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let root: ApiClient;
  let site: string;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    site = server.baseUrl.replace('127.0.0.1', 'localhost');
    await setUp(server.baseUrl, ROOT);
    root = await signIn(server.baseUrl, ROOT);
    await setOption(root, 'ServerAddress', site);
    await root.ok('POST', '/api/user/', { ...ALICE, display_name: 'Alice' });

    context = await newContext(browser, site, { language: 'en', theme: 'light' });
    page = await context.newPage();
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    // A platform authenticator that holds discoverable passkeys and verifies its user (a fingerprint, a PIN).
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.stop();
  });

  async function signOut() {
    await page.evaluate(() => localStorage.removeItem('user'));
    await context.clearCookies();
  }

  async function passwordStep() {
    await page.goto(`${site}/login`);
    await page.locator('input[name=username]').fill(ALICE.username);
    await page.locator('input[name=password]').fill(ALICE.password);
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
  }

  it('enrols a passkey from the personal settings and signs in with it, without a password', async () => {
    const errors = watchErrors(page);
    await passwordStep();
    await page.waitForURL(`${site}/token`);
    await page.goto(`${site}/personal`);
    await page.locator('input[name=passkey-name]').fill('e2e laptop');
    await page.getByRole('button', { name: en('two-factor', 'passkey.add') }).click();
    await page
      .getByRole('list', { name: en('two-factor', 'passkey.title') })
      .getByText('e2e laptop')
      .waitFor();
    // The authenticator holds one discoverable passkey for this site, naming Alice by her user id.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const alice = (
      await root.ok<{ items: { id: number; username: string }[] }>('GET', '/api/user/?p=1')
    ).items.find((u) => u.username === 'alice');
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    expect(Buffer.from(credentials[0]?.userHandle ?? '', 'base64').toString()).toBe(String(alice?.id));

    await signOut();
    await page.goto(`${site}/login`);
    await page.getByRole('button', { name: en('two-factor', 'signIn.withPasskey') }).click();
    await page.waitForURL(`${site}/token`);
    const stored = JSON.parse((await page.evaluate(() => localStorage.getItem('user'))) ?? 'null');
    expect(stored.username).toBe('alice');
    expect(errors).toEqual([]);
  });

  it('after the password, asks for the second factor, and the passkey answers it', async () => {
    const errors = watchErrors(page);
    // Alice turns on the authenticator app in the console; the code is made from the key the page shows.
    await page.goto(`${site}/personal`);
    await page.getByRole('button', { name: en('two-factor', 'setup.start') }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.getByRole('img', { name: en('two-factor', 'setup.qrLabel') }).waitFor();
    await screenshot(page, 'two-factor-enrolment');
    await page.getByLabel(en('two-factor', 'backup.saved')).check();
    await page
      .locator('input[name=totp-code]')
      .fill(new TOTP({ secret: Secret.fromBase32(secret) }).generate());
    await page.getByRole('button', { name: en('two-factor', 'setup.enable') }).click();
    await page.getByText(en('two-factor', 'manage.on'), { exact: true }).waitFor();

    await signOut();
    await passwordStep();
    // The password alone: the second step, and no session yet.
    await page.locator('input[name=code]').waitFor();
    await screenshot(page, 'two-factor-second-step');
    expect(await page.evaluate(() => localStorage.getItem('user'))).toBeNull();
    expect((await context.cookies()).find((c) => c.name === 'session')).toBeUndefined();
    await page.getByRole('button', { name: en('two-factor', 'signIn.usePasskey') }).click();
    await page.waitForURL(`${site}/token`);
    expect((await context.cookies()).find((c) => c.name === 'session')).toBeDefined();
    expect(errors).toEqual([]);
  });
});

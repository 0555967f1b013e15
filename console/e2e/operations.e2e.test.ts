/**
 * The operations console of issue 6 in real headless Chromium against a fresh all-in-one server whose only
 * upstream is a fake OpenAI (the real wire format, streamed replies with usage). One admin works through the day
 * in English: adds a channel and tests it, creates a token, hands themselves a redemption code and redeems it
 * (the root account starts with no quota), chats in the playground, calls the API with the token, finds both
 * calls billed in the usage log; a visitor reads the prices; the remaining screens open without errors. Each
 * step checks what the user sees and the server state behind it.
 */
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClient, chatCompletion, eventually, ROOT, setOption, setUp, signIn } from './api.ts';
import { en, watchErrors } from './checks.ts';
import {
  buildConsoleIfStale,
  launchBrowser,
  newContext,
  type RunningServer,
  startServer,
} from './harness.ts';

const MODEL = 'gpt-4o-mini';
const UPSTREAM_KEY = 'sk-upstream-e2e-key';
const REPLY = 'Turnpike relayed this answer from the fake upstream in several pieces.';
const CHAT_HOST = 'https://chat.example.test';

interface ChannelRow {
  id: number;
  name: string;
  type: number;
  base_url: string;
  models: string;
  group: string;
  status: number;
  response_time: number;
  test_time: number;
}
interface TokenRow {
  id: number;
  name: string;
  key: string;
  status: number;
  remain_quota: number;
  used_quota: number;
}
interface LogRow {
  id: number;
  type: number;
  token_name: string;
  model_name: string;
  prompt_tokens: number;
  completion_tokens: number;
  quota: number;
  is_stream: boolean;
  channel: number;
  other: string;
}
interface PricingAnswer {
  data: { model_name: string; model_ratio: number; completion_ratio: number; quota_type: number }[];
  group_ratio: Record<string, number>;
}

/** The quota a priced chat costs (core/src/billing/settle.ts): round((prompt + completion × cr) × mr × gr), ≥ 1. */
function expectedQuota(
  log: Pick<LogRow, 'prompt_tokens' | 'completion_tokens'>,
  price: { modelRatio: number; completionRatio: number; groupRatio: number },
): number {
  const weighted =
    (log.prompt_tokens + log.completion_tokens * price.completionRatio) * price.modelRatio * price.groupRatio;
  return Math.max(1, Math.round(Number(weighted.toPrecision(15))));
}

/** A table row's cells keyed by their column headers (a header-less column, like the expander, is left out). */
async function cellsByColumn(page: Page, row: Locator): Promise<Record<string, string>> {
  const headers = await page.locator('thead th').allInnerTexts();
  const cells = await row.locator('td').allInnerTexts();
  return Object.fromEntries(
    headers.map((h, i) => [h.trim(), (cells[i] ?? '').trim()] as const).filter(([h]) => h !== ''),
  );
}

describe('operations console in a real browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let upstream: FakeOpenAi;
  let api: ApiClient;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  /** What the journey made, for the steps after it. */
  const made = { channelId: 0, tokenKey: '' };

  const selfQuota = async () =>
    (await api.ok<{ quota: number; used_quota: number }>('GET', '/api/user/self')).quota;
  const consumeLogs = async () =>
    (await api.ok<{ items: LogRow[] }>('GET', '/api/log/?p=1&page_size=50&type=2')).items;

  // each step reports only what went wrong during it
  beforeEach(() => {
    errors?.splice(0);
  });

  beforeAll(async () => {
    buildConsoleIfStale();
    [server, upstream, browser] = await Promise.all([
      startServer(),
      startFakeOpenAi({ apiKey: UPSTREAM_KEY, reply: REPLY }),
      launchBrowser(),
    ]);
    await setUp(server.baseUrl, ROOT);
    api = await signIn(server.baseUrl, ROOT);

    context = await newContext(browser, server.baseUrl, { language: 'en', theme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    // chat front-ends are other sites: answer for them here, never over the network
    await context.route(`${CHAT_HOST}/**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<title>chat</title><h1>E2E chat front-end</h1>' }),
    );
    page = await context.newPage();
    errors = watchErrors(page);
    await page.goto('/login');
    await page.locator('input[name=username]').fill(ROOT.username);
    await page.locator('input[name=password]').fill(ROOT.password);
    await page.getByRole('button', { name: en('common', 'auth.login'), exact: true }).click();
    await page.waitForURL('**/token');
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.stop(), upstream?.close()]);
  });

  it('adds an OpenAI channel in the drawer and tests it from the table and the model picker', async () => {
    await page.goto('/channel');
    await page.getByRole('heading', { name: en('channels', 'title') }).waitFor();
    await page.getByText(en('channels', 'empty.title')).waitFor();
    await page
      .getByRole('button', { name: en('channels', 'toolbar.add') })
      .first()
      .click();

    const sheet = page.getByRole('dialog', { name: en('channels', 'drawer.createTitle') });
    // a new channel is OpenAI in the default group
    expect(await sheet.getByLabel(en('channels', 'field.type')).inputValue()).toBe('1');
    expect(await sheet.getByRole('checkbox', { name: 'default' }).isChecked()).toBe(true);
    // submitting without name and key says what is missing
    await sheet.getByRole('button', { name: en('common', 'common.submit') }).click();
    await sheet.getByText(en('channels', 'error.nameAndKey')).first().waitFor();

    await sheet.getByLabel(en('channels', 'field.name'), { exact: true }).fill('fake-openai');
    await sheet.getByLabel(en('channels', 'field.key'), { exact: true }).fill(UPSTREAM_KEY);
    await sheet.getByLabel(en('channels', 'field.baseUrl')).fill(`${upstream.url}/`);
    await sheet.getByRole('button', { name: en('channels', 'models.clear') }).click();
    await sheet.getByText(en('channels', 'models.none')).waitFor();
    await sheet.getByLabel(en('channels', 'models.custom')).fill(MODEL);
    await sheet.getByRole('button', { name: en('channels', 'models.add'), exact: true }).click();
    await sheet.getByRole('button', { name: en('channels', 'models.remove', { model: MODEL }) }).waitFor();
    await sheet.getByLabel(en('channels', 'field.testModel')).fill(MODEL);
    await sheet.getByRole('button', { name: en('common', 'common.submit') }).click();
    await page.getByText(en('channels', 'done.created_one')).waitFor();
    await sheet.waitFor({ state: 'detached' });

    const row = page.locator('tr', { has: page.getByText('fake-openai', { exact: true }) });
    await row.getByText(en('channels', 'status.enabled'), { exact: true }).waitFor();
    await row.getByText(en('channels', 'time.untested')).waitFor();

    // what the server stored: the trailing slash is gone, one model, the default group
    const [stored] = (await api.ok<{ items: ChannelRow[] }>('GET', '/api/channel/?p=1&page_size=10')).items;
    expect(stored).toMatchObject({
      name: 'fake-openai',
      type: 1,
      base_url: upstream.url,
      models: MODEL,
      group: 'default',
      status: 1,
    });
    made.channelId = stored?.id ?? 0;

    // Test from the table: a real call upstream with the stored key, then the response time shows.
    upstream.setBehaviour({ headersDelayMs: 60 });
    const before = upstream.requests.length;
    await row
      .getByRole('button', { name: en('channels', 'action.testOf', { name: 'fake-openai' }), exact: true })
      .click();
    await page.getByText(/^Channel test succeeded in \d+\.\d\d s$/).waitFor();
    await row.getByText(/^\d+\.\d\d s$/).waitFor();
    const sent = upstream.requests.slice(before).find((r) => r.path === '/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect((sent?.body as { model?: string } | undefined)?.model).toBe(MODEL);
    const tested = await api.ok<ChannelRow>('GET', `/api/channel/${made.channelId}`);
    expect(tested.response_time).toBeGreaterThanOrEqual(60);
    expect(await row.getByText(/^\d+\.\d\d s$/).textContent()).toBe(
      `${(tested.response_time / 1000).toFixed(2)} s`,
    );

    // The model-test picker: one model, its own test, its time.
    await row
      .getByRole('button', { name: en('channels', 'action.pickModelOf', { name: 'fake-openai' }) })
      .click();
    const picker = page.getByRole('dialog', {
      name: en('channels', 'testModel.title', { name: 'fake-openai' }),
    });
    const card = picker.getByTestId(`model-test-${MODEL}`);
    await card.getByText(en('channels', 'testModel.default')).waitFor();
    await card.getByRole('button', { name: en('channels', 'testModel.testOf', { model: MODEL }) }).click();
    await card.getByText(/^\d+\.\d\d s$/).waitFor();
    await picker
      .getByRole('button', { name: en('common', 'common.close') })
      .first()
      .click();
    await picker.waitFor({ state: 'detached' });
    upstream.setBehaviour({ headersDelayMs: 0 });

    // The upstream refusing the key is a failed test, and the table says so.
    upstream.setBehaviour({ apiKey: 'sk-some-other-key' });
    await row
      .getByRole('button', { name: en('channels', 'action.testOf', { name: 'fake-openai' }), exact: true })
      .click();
    await page.getByText(/^Channel test failed: /).waitFor();
    upstream.setBehaviour({ apiKey: UPSTREAM_KEY });
    expect(errors).toEqual([]);
  });

  it('creates a token in the drawer and copies its key', async () => {
    await page.goto('/token');
    await page.getByRole('heading', { name: en('tokens', 'title') }).waitFor();
    await page.getByRole('note').getByText(en('tokens', 'ownUseWarning')).waitFor();
    await page.getByText(en('tokens', 'empty.title')).waitFor();
    await page
      .getByRole('button', { name: en('tokens', 'add') })
      .first()
      .click();

    const sheet = page.getByRole('dialog', { name: en('tokens', 'sheet.createTitle') });
    await sheet.getByRole('button', { name: en('tokens', 'sheet.submit') }).click();
    await sheet.getByText(en('tokens', 'error.nameRequired')).first().waitFor();
    await sheet.getByLabel(en('tokens', 'field.name')).fill('e2e-app');
    await sheet.getByRole('button', { name: en('tokens', 'sheet.submit') }).click();
    await page.getByText(en('tokens', 'created'), { exact: true }).waitFor();
    await sheet.waitFor({ state: 'detached' });

    const row = page.locator('tr', { has: page.getByText('e2e-app', { exact: true }) });
    await row.getByText(en('tokens', 'status.enabled'), { exact: true }).waitFor();
    await row.getByText(en('tokens', 'never')).waitFor();
    await row.getByText('$1.00').waitFor(); // the default quota, 500000 units

    await row.getByRole('button', { name: `${en('tokens', 'action.copy')} e2e-app` }).click();
    await page.getByText(en('common', 'copy.done')).first().waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toMatch(/^sk-[A-Za-z0-9]{16,}$/);

    const [token] = (await api.ok<{ items: TokenRow[] }>('GET', '/api/token/?p=1&size=10')).items;
    expect(token).toMatchObject({ name: 'e2e-app', key: copied, status: 1, remain_quota: 500000 });
    made.tokenKey = copied;
    expect(errors).toEqual([]);
  });

  it('creates a redemption code, downloads it, and redeems it in the wallet', async () => {
    await page.goto('/redemption');
    await page.getByRole('heading', { name: en('redemptions', 'title') }).waitFor();
    await page.getByText(en('redemptions', 'empty.title')).waitFor();
    await page
      .getByRole('button', { name: en('redemptions', 'add') })
      .first()
      .click();

    const sheet = page.getByRole('dialog', { name: en('redemptions', 'sheet.createTitle') });
    await sheet.getByLabel(en('redemptions', 'field.name')).fill('e2e-gift');
    await sheet.getByLabel(en('redemptions', 'field.quota')).fill('2500000');
    await sheet.getByText(en('redemptions', 'field.quotaIs', { money: '$5.00' })).waitFor();
    const download = page.waitForEvent('download');
    await sheet.getByRole('button', { name: en('redemptions', 'sheet.submit') }).click();

    // the codes arrive as a text file named after the batch, and in a dialog
    const file = await download;
    expect(file.suggestedFilename()).toBe('e2e-gift.txt');
    const content = await new Response((await file.createReadStream()) as unknown as ReadableStream).text();
    const code = content.trim();
    expect(code).toMatch(/^[A-Za-z0-9-]{16,}$/);
    const created = page.getByRole('dialog', {
      name: en('redemptions', 'createdDialog.title_one', { count: 1 }),
    });
    expect(await created.getByLabel(en('redemptions', 'createdDialog.codes')).inputValue()).toBe(code);
    await created.getByRole('button', { name: en('redemptions', 'createdDialog.close') }).click();
    await created.waitFor({ state: 'detached' });
    const row = page.locator('tr', { has: page.getByText('e2e-gift', { exact: true }) });
    await row.getByText(en('redemptions', 'status.unused')).waitFor();
    await row.getByText('$5.00').waitFor();

    // The wallet: an empty code is refused, the real one adds its quota to the balance.
    const before = await selfQuota();
    await page.getByRole('link', { name: en('common', 'menu.wallet') }).click();
    await page.waitForURL('**/topup');
    const balance = page.getByTestId('wallet-balance');
    await balance.getByText(`$${(before / 500000).toFixed(2)}`).waitFor();
    await page.getByRole('button', { name: en('wallet', 'redeem.submit') }).click();
    await page.getByText(en('wallet', 'error.codeRequired')).first().waitFor();
    await page.getByLabel(en('wallet', 'redeem.code')).fill(code);
    await page.getByRole('button', { name: en('wallet', 'redeem.submit') }).click();
    await page.getByText(en('wallet', 'redeem.done', { quota: '$5.00' })).waitFor();
    await balance.getByText(`$${((before + 2_500_000) / 500000).toFixed(2)}`).waitFor();
    expect(await selfQuota()).toBe(before + 2_500_000);
    expect(await page.getByLabel(en('wallet', 'redeem.code')).inputValue()).toBe('');

    // the code is used up: redeeming it again fails with the server's reason, and its row says Used
    await page.getByLabel(en('wallet', 'redeem.code')).fill(code);
    await page.getByRole('button', { name: en('wallet', 'redeem.submit') }).click();
    await page.getByRole('alert').first().waitFor();
    expect(await selfQuota()).toBe(before + 2_500_000);
    await page.goto('/redemption');
    await row.getByText(en('redemptions', 'status.used')).waitFor();
    await row.getByText(en('redemptions', 'userId', { id: api.userId })).waitFor();
    expect(errors).toEqual([]);
  });

  it('streams a playground reply from the chosen model', async () => {
    upstream.setBehaviour({ chunkDelayMs: 80 });
    await page.goto('/playground');
    const settings = page.getByRole('region', { name: en('playground', 'settings.title') });
    const model = settings.getByLabel(en('playground', 'settings.model'));
    await model.fill(MODEL);
    const conversation = page.getByRole('log', { name: en('playground', 'chat.log') });
    // the greeting exchange
    await conversation.getByText(en('playground', 'greeting.assistant')).waitFor();
    expect(await conversation.getByTestId('message').count()).toBe(2);

    const before = upstream.requests.length;
    await page.getByLabel(en('playground', 'chat.input')).fill('What does the gateway do?');
    await page.getByRole('button', { name: en('playground', 'chat.send') }).click();
    const reply = conversation.getByTestId('message').nth(3);
    // while the answer streams in: a partial message and a Stop button
    await page.getByRole('button', { name: en('playground', 'chat.stop') }).waitFor();
    await conversation.locator('[data-status=incomplete]').waitFor();
    // the end: the whole reply, marked complete, Send again
    await conversation.locator('[data-status=complete]', { hasText: REPLY }).waitFor();
    expect(await reply.getAttribute('data-status')).toBe('complete');
    expect((await reply.textContent())?.replace(en('playground', 'chat.assistant'), '')).toBe(REPLY);
    await page.getByRole('button', { name: en('playground', 'chat.send') }).waitFor();
    expect(await conversation.getByText(en('playground', 'chat.you')).count()).toBe(2);
    upstream.setBehaviour({ chunkDelayMs: 0 });

    const sent = upstream.requests.slice(before).find((r) => r.path === '/v1/chat/completions');
    const body = sent?.body as {
      model: string;
      stream: boolean;
      messages: { role: string; content: string }[];
    };
    expect(body.model).toBe(MODEL);
    expect(body.stream).toBe(true);
    expect(body.messages[0]).toEqual({ role: 'system', content: en('playground', 'defaultSystemPrompt') });
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'What does the gateway do?' });
    expect(errors).toEqual([]);
  });

  it('bills the playground chat and a token call in the usage log', async () => {
    // the call an application makes with the token
    // (the playground's charge is written with its log, in the same batch)
    // A log and its charge are written together; the balance is read between two reads of the logs that agree,
    // so it belongs to exactly those logs.
    const quotaBefore = await eventually(
      async () => {
        const logs = await consumeLogs();
        const quota = await selfQuota();
        return { quota, logs, steady: (await consumeLogs()).length === logs.length };
      },
      (s) => s.steady && s.logs.some((l) => l.is_stream),
      { what: 'the playground log' },
    );
    const answer = await chatCompletion(server.baseUrl, made.tokenKey, {
      model: MODEL,
      messages: [{ role: 'user', content: 'Say something about toll roads.' }],
    });
    expect(answer.status).toBe(200);
    const choices = answer.json.choices as { message: { content: string } }[];
    expect(choices[0]?.message.content).toBe(REPLY);

    const logs = await eventually(consumeLogs, (items) => items.some((l) => l.token_name === 'e2e-app'), {
      what: 'the token call in the log',
    });
    const tokenLog = logs.find((l) => l.token_name === 'e2e-app') as LogRow;
    const playgroundLog = logs.find((l) => l.is_stream && l.model_name === MODEL) as LogRow;
    expect(playgroundLog).toBeDefined();
    const pricing = (await (await fetch(`${server.baseUrl}/api/pricing`)).json()) as PricingAnswer;
    const entry = pricing.data.find((m) => m.model_name === MODEL);
    expect(entry?.quota_type).toBe(0);
    const price = {
      modelRatio: entry?.model_ratio ?? Number.NaN,
      completionRatio: entry?.completion_ratio ?? Number.NaN,
      groupRatio: pricing.group_ratio.default ?? 1,
    };
    for (const log of [tokenLog, playgroundLog]) {
      expect(log.prompt_tokens).toBeGreaterThan(0);
      expect(log.completion_tokens).toBeGreaterThan(0);
      expect(log.channel).toBe(made.channelId);
      expect(log.quota).toBe(expectedQuota(log, price));
    }
    // the user paid exactly what the token call's log says
    await eventually(selfQuota, (q) => q === quotaBefore.quota - tokenLog.quota, {
      what: 'the balance after the token call',
    });
    const [token] = (await api.ok<{ items: TokenRow[] }>('GET', '/api/token/?p=1&size=10')).items;
    expect(token?.used_quota).toBe(tokenLog.quota);

    // Quota in units, so the table shows the exact amounts.
    await setOption(api, 'DisplayInCurrencyEnabled', 'false');
    try {
      await page.goto('/log');
      await page.getByRole('heading', { name: en('logs', 'title') }).waitFor();
      const tokenRow = page.locator('tbody tr', { has: page.getByText('e2e-app', { exact: true }) });
      await tokenRow.waitFor();
      const units = (n: number) => new Intl.NumberFormat('en-US').format(n);
      const tokenCells = await cellsByColumn(page, tokenRow);
      expect(tokenCells).toMatchObject({
        [en('logs', 'col.model')]: MODEL,
        [en('logs', 'col.token')]: 'e2e-app',
        [en('logs', 'col.prompt')]: units(tokenLog.prompt_tokens),
        [en('logs', 'col.completion')]: units(tokenLog.completion_tokens),
        [en('logs', 'col.quota')]: units(tokenLog.quota),
      });
      expect(tokenCells[en('logs', 'col.useTime')]).toContain(en('logs', 'nonStream'));

      // the playground row: streamed, same model, its own bill
      const streamRow = page.locator('tbody tr', {
        has: page.getByText(en('logs', 'stream'), { exact: true }),
      });
      await streamRow.first().waitFor();
      expect(await streamRow.count()).toBe(1);
      expect(await cellsByColumn(page, streamRow)).toMatchObject({
        [en('logs', 'col.model')]: MODEL,
        [en('logs', 'col.prompt')]: units(playgroundLog.prompt_tokens),
        [en('logs', 'col.completion')]: units(playgroundLog.completion_tokens),
        [en('logs', 'col.quota')]: units(playgroundLog.quota),
      });

      // The expanded row shows the ratios the bill came from.
      await tokenRow
        .getByRole('button', { name: en('logs', 'details.toggleRow', { id: tokenLog.id }) })
        .click();
      const details = tokenRow.locator('xpath=following-sibling::tr[1]');
      await details.getByText(en('logs', 'other.modelRatio'), { exact: true }).first().waitFor();
      expect(await details.textContent()).toContain(String(price.modelRatio));
      expect(await details.textContent()).toContain(String(price.completionRatio));

      // the totals of a filter on the token add up to its one call
      await page.getByLabel(en('logs', 'filter.token')).fill('e2e-app');
      await page.getByRole('button', { name: en('logs', 'filter.submit') }).click();
      await page
        .getByRole('region', { name: en('logs', 'stat.label') })
        .getByText(`${en('logs', 'stat.quota')}: ${units(tokenLog.quota)}`)
        .waitFor();
      await expect.poll(() => page.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1);
    } finally {
      await setOption(api, 'DisplayInCurrencyEnabled', 'true');
    }
    expect(errors).toEqual([]);
  });

  it('shows a visitor the model and its price on the pricing page', async () => {
    const visitor = await newContext(browser, server.baseUrl, { language: 'en' });
    const guest = await visitor.newPage();
    const guestErrors = watchErrors(guest);
    await guest.goto('/pricing');
    await guest.getByRole('heading', { name: en('pricing', 'title') }).waitFor();
    const pricing = (await (await fetch(`${server.baseUrl}/api/pricing`)).json()) as PricingAnswer;
    const entry = pricing.data.find((m) => m.model_name === MODEL);
    const groupRatio = pricing.group_ratio.default ?? 1;
    await guest.getByText(en('pricing', 'banner.visitor', { ratio: groupRatio })).waitFor();

    const row = guest.locator('tbody tr', { has: guest.getByRole('button', { name: MODEL, exact: true }) });
    await row.waitFor();
    await row.getByText(en('pricing', 'available.yes', { group: 'default' })).waitFor();
    await row.getByText(en('pricing', 'billing.perToken')).waitFor();
    // GPT-4o mini as https://platform.openai.com/docs/pricing publishes it (the built-in prices, default group at
    // ratio 1): $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    expect(groupRatio).toBe(1);
    await row.getByText(en('pricing', 'price.input', { price: '$0.15' })).waitFor();
    await row.getByText(en('pricing', 'price.output', { price: '$0.6' })).waitFor();
    await row.getByText(en('pricing', 'price.cacheRead', { price: '$0.075' })).waitFor();
    await row.getByText(en('pricing', 'ratio.model', { ratio: entry?.model_ratio ?? 0 })).waitFor();
    expect(await row.getByText(/Cache write/).count()).toBe(0);

    // A long-context tier the operator sets shows at once, at the tier's prices (× 2 input, × 4 output past 128K).
    const options = await api.ok<{ key: string; value: string }[]>('GET', '/api/option/');
    const tiersBefore = options.find((o) => o.key === 'LongContextTiers')?.value ?? '{}';
    await setOption(
      api,
      'LongContextTiers',
      JSON.stringify({ ...JSON.parse(tiersBefore), [MODEL]: [{ above: 128000, input: 2, output: 4 }] }),
    );
    try {
      await guest.reload();
      await row
        .getByText(
          en('pricing', 'price.longContextCache', {
            tokens: '128K',
            input: '$0.3',
            output: '$2.4',
            cache: '$0.15',
          }),
        )
        .waitFor();
    } finally {
      await setOption(api, 'LongContextTiers', tiersBefore);
    }

    // the search narrows the list to the model, and a miss says so
    await guest.getByLabel(en('pricing', 'search.label')).fill('4O-MINI');
    await row.waitFor();
    await guest.getByLabel(en('pricing', 'search.label')).fill('no-such-model');
    await guest.getByText(en('pricing', 'empty.search')).waitFor();
    expect(await guest.evaluate(() => localStorage.getItem('user'))).toBeNull();
    expect(guestErrors).toEqual([]);
    await visitor.close();
  });

  it('opens the drawing log, task log, dashboard and chat pages without errors', async () => {
    await page.goto('/midjourney');
    await page.getByRole('heading', { name: en('tasks', 'drawing.title') }).waitFor();
    await page.getByText(en('tasks', 'drawing.callbackOff')).waitFor(); // the admin's hint
    await page.getByText(en('tasks', 'drawing.empty')).waitFor();

    await page.goto('/task');
    await page.getByRole('heading', { name: en('tasks', 'task.title') }).waitFor();
    await page.getByText(en('tasks', 'task.empty')).waitFor();

    // The dashboard is off while the operator has data export turned off, and back once it is on again.
    await setOption(api, 'DataExportEnabled', 'false');
    await page.goto('/detail');
    await page.getByText(en('dashboard', 'disabled.title')).waitFor();
    await page.getByTestId('side-menu').waitFor();
    expect(
      await page
        .getByTestId('side-menu')
        .getByRole('link', { name: en('common', 'menu.dashboard') })
        .count(),
    ).toBe(0);
    await setOption(api, 'DataExportEnabled', 'true');
    await page.reload();
    await page.getByRole('heading', { name: en('dashboard', 'title') }).waitFor();
    await page.getByLabel(en('dashboard', 'filter.granularity')).waitFor();
    await page
      .getByText(en('dashboard', 'card.quota'))
      .or(page.getByText(en('dashboard', 'empty.title')))
      .first()
      .waitFor();
    // and the side menu offers it from now on
    await page
      .getByTestId('side-menu')
      .getByRole('link', { name: en('common', 'menu.dashboard') })
      .waitFor();

    // Chat links: /chat/0 frames the first one with the first enabled token and this server's address.
    await setOption(api, 'Chats', JSON.stringify([{ 'E2E Chat': `${CHAT_HOST}/?key={key}&url={address}` }]));
    const origin = encodeURIComponent(server.baseUrl);
    await page.goto('/chat/0');
    const frame = page.locator('iframe[title="E2E Chat"]');
    await frame.waitFor();
    expect(await frame.getAttribute('src')).toBe(`${CHAT_HOST}/?key=${made.tokenKey}&url=${origin}`);
    await page.frameLocator('iframe[title="E2E Chat"]').getByText('E2E chat front-end').waitFor();
    // the side menu lists the chat under its name (the sidebar is hidden on chat pages, so look from the console)
    await page.goto('/token');
    await page.getByTestId('side-menu').getByRole('link', { name: 'E2E Chat' }).waitFor();

    // /chat2link leaves the console for the chat link, filled in the same way.
    await page.goto('/chat2link');
    await page.waitForURL((url) => url.origin === CHAT_HOST);
    expect(page.url()).toBe(`${CHAT_HOST}/?key=${made.tokenKey}&url=${origin}`);
    await page.getByText('E2E chat front-end').waitFor();
    expect(errors).toEqual([]);
  });
});

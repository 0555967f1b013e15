/**
 * Audio billing through `POST /v1/chat/completions` (reference §5.4, audio models): a chat with audio input and
 * output, reported the way `gpt-4o-audio-preview` reports it (`prompt_tokens_details.audio_tokens` and
 * `completion_tokens_details.audio_tokens`, both inside the prompt and completion counts), costs its text tokens at
 * the text price and its audio tokens at the audio price, once. The expected charge is OpenAI's published price per
 * 1M tokens (written below with its page) converted at the documented 1 USD = 500 000 quota units, not the product's
 * ratio table; the test sets the text prices from the same figures. The bill is checked as the invariant an operator
 * would check: the consume log's quota = the published price's figure = the balance drop = the used-quota growth.
 */
import { channels, logs, tokens, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

const START = 10_000_000;
const AUDIO_IN = 1_200;
const AUDIO_OUT = 800;

/** Quota units per US dollar (the documented `QuotaPerUnit`, 500 000). */
const QUOTA_PER_USD = 500_000;

interface Price {
  /** US dollars per 1M tokens. */
  readonly textIn: number;
  readonly textOut: number;
  readonly audioIn: number;
  readonly audioOut: number;
}

/**
 * OpenAI's published prices, USD per 1M tokens:
 * - gpt-4o-audio-preview-2024-12-17: https://developers.openai.com/api/docs/models/gpt-4o-audio-preview (text $2.50
 *   in, $10 out; audio $40 in, $80 out).
 * - gpt-4o-mini-audio-preview: https://developers.openai.com/api/docs/models/gpt-4o-mini-audio-preview (text $0.15
 *   in, $0.60 out; audio $10 in, $20 out).
 * - gpt-4o: https://developers.openai.com/api/docs/models/gpt-4o (text $2.50 in, $10 out; no audio price: it is not
 *   an audio model, so only that its audio tokens are not billed as text is checked).
 */
const PRICES: Readonly<Record<string, Price | Pick<Price, 'textIn' | 'textOut'>>> = {
  'gpt-4o-audio-preview-2024-12-17': { textIn: 2.5, textOut: 10, audioIn: 40, audioOut: 80 },
  'gpt-4o-mini-audio-preview': { textIn: 0.15, textOut: 0.6, audioIn: 10, audioOut: 20 },
  'gpt-4o': { textIn: 2.5, textOut: 10 },
};

/** A model ratio is the input price in units of $2 per 1M tokens (ratio 1 = $0.002 / 1K tokens). */
const modelRatioOf = (price: Pick<Price, 'textIn'>) => price.textIn / 2;
const completionRatioOf = (price: Pick<Price, 'textIn' | 'textOut'>) => price.textOut / price.textIn;

let t: RelayTestApp;
let fake: FakeOpenAi;
let channelId: number;

const db = () => t.runtime.deps.db;
const userRow = async (id: number) => (await db().select().from(users).where(eq(users.id, id)))[0]!;
const tokenRow = async (id: number) => (await db().select().from(tokens).where(eq(tokens.id, id)))[0]!;
const channelUsed = async () =>
  (await db().select({ used: channels.usedQuota }).from(channels).where(eq(channels.id, channelId)))[0]!.used;

interface ReportedUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly prompt_tokens_details: { readonly audio_tokens: number };
  readonly completion_tokens_details: { readonly audio_tokens: number };
}

/** The charge at the published price: each kind of token at its price, in quota units. */
const publishedBill = (u: ReportedUsage, price: Price) => {
  const audioIn = u.prompt_tokens_details.audio_tokens;
  const audioOut = u.completion_tokens_details.audio_tokens;
  const dollars =
    ((u.prompt_tokens - audioIn) * price.textIn +
      (u.completion_tokens - audioOut) * price.textOut +
      audioIn * price.audioIn +
      audioOut * price.audioOut) /
    1_000_000;
  return Math.round(dollars * QUOTA_PER_USD);
};

/** What the bill would be with the audio tokens billed as text (the bug this file guards against). */
const textBill = (u: ReportedUsage, price: Pick<Price, 'textIn' | 'textOut'>) =>
  Math.round(
    ((u.prompt_tokens * price.textIn + u.completion_tokens * price.textOut) / 1_000_000) * QUOTA_PER_USD,
  );

async function send(headers: Record<string, string>, model: string, stream: boolean) {
  const response = await t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers,
    payload: {
      model,
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'wav' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this recording?' },
            { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZFZm10IA==', format: 'wav' } },
          ],
        },
      ],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    },
  });
  expect(response.statusCode, response.body).toBe(200);
  let usage: ReportedUsage;
  if (stream) {
    const chunks = response.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    usage = chunks.at(-1).usage;
  } else usage = response.json().usage;
  return { requestId: response.headers['x-request-id'] as string, usage };
}

beforeAll(async () => {
  fake = await startFakeOpenAi({ audioInputTokens: AUDIO_IN, audioOutputTokens: AUDIO_OUT });
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  const models = Object.keys(PRICES);
  await options.set(
    'ModelRatio',
    JSON.stringify(Object.fromEntries(Object.entries(PRICES).map(([m, price]) => [m, modelRatioOf(price)]))),
  );
  await options.set(
    'CompletionRatio',
    JSON.stringify(
      Object.fromEntries(Object.entries(PRICES).map(([m, price]) => [m, completionRatioOf(price)])),
    ),
  );
  channelId = (await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: models.join(',') })).id;
  await t.startRelay();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

describe('audio billing through /v1/chat/completions', () => {
  const table = [
    { model: 'gpt-4o-audio-preview-2024-12-17' },
    { model: 'gpt-4o-mini-audio-preview' },
    // not an audio model by name, but its usage reports audio tokens: those are not billed as text either
    { model: 'gpt-4o' },
  ].flatMap((c) => [
    { ...c, stream: false, title: c.model },
    { ...c, stream: true, title: `${c.model} (stream)` },
  ]);

  it.each(table)('bills audio tokens at the published audio price, once: $title', async (c) => {
    const user = await t.seedUser({ quota: START });
    const token = await t.seedToken(user.id, { remainQuota: START, unlimitedQuota: false });
    const channelBefore = await channelUsed();

    const { requestId, usage } = await send({ authorization: `Bearer sk-${token.key}` }, c.model, c.stream);
    expect(usage.prompt_tokens_details.audio_tokens).toBe(AUDIO_IN);
    expect(usage.completion_tokens_details.audio_tokens).toBe(AUDIO_OUT);
    const price = PRICES[c.model]!;
    const log = await waitFor(
      async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0],
    );
    const quota = 'audioIn' in price ? publishedBill(usage, price) : log.quota;
    // Far more than the same tokens billed as text: the audio tokens are not billed as text as well.
    expect(quota).toBeGreaterThan(textBill(usage, price) * 5);
    expect(log).toMatchObject({
      quota,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      isStream: c.stream,
    });
    expect(JSON.parse(log.other)).toMatchObject({
      audio: true,
      audio_input: AUDIO_IN,
      audio_output: AUDIO_OUT,
      text_input: usage.prompt_tokens - AUDIO_IN,
      text_output: usage.completion_tokens - AUDIO_OUT,
      model_ratio: modelRatioOf(price),
      completion_ratio: completionRatioOf(price),
    });

    await waitFor(async () => ((await userRow(user.id)).requestCount === 1 ? true : undefined));
    const check = async () => {
      expect(await userRow(user.id)).toMatchObject({ quota: START - quota, usedQuota: quota });
      expect(await tokenRow(token.id)).toMatchObject({ remainQuota: START - quota, usedQuota: quota });
      expect(await channelUsed()).toBe(channelBefore + quota);
      expect(await db().select().from(logs).where(eq(logs.userId, user.id))).toHaveLength(1);
    };
    await check();
    await sleep(100);
    await check();
  });
});

/**
 * Audio billing through `POST /v1/chat/completions` (reference §5.4, audio models): a chat with audio input and
 * output, reported the way `gpt-4o-audio-preview` reports it (`prompt_tokens_details.audio_tokens` and
 * `completion_tokens_details.audio_tokens`, both inside the prompt and completion counts), costs its text tokens at
 * the text price and its audio tokens at the audio ratio, once. The bill is checked as the invariant an operator
 * would check: the consume log's quota = the formula's figure = the balance drop = the used-quota growth.
 */
import { AUDIO_COMPLETION_RATIO } from '@turnpike/core/billing/ratios';
import { channels, logs, tokens, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { sleep, waitFor } from './testing/wait.ts';

const START = 10_000_000;
const AUDIO_IN = 1_200;
const AUDIO_OUT = 800;
const MODEL_RATIO = 1.25;
const COMPLETION_RATIO = 4;

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

/** The reference's audio formula, written out here apart from the code under test. */
const audioBill = (u: ReportedUsage, audioRatio: number) => {
  const audioIn = u.prompt_tokens_details.audio_tokens;
  const audioOut = u.completion_tokens_details.audio_tokens;
  const weighted =
    u.prompt_tokens -
    audioIn +
    (u.completion_tokens - audioOut) * COMPLETION_RATIO +
    audioIn * audioRatio +
    audioOut * audioRatio * AUDIO_COMPLETION_RATIO;
  return Math.round(weighted * MODEL_RATIO);
};

/** What the bill would be with the audio tokens billed as text (the bug this file guards against). */
const textBill = (u: ReportedUsage) =>
  Math.round((u.prompt_tokens + u.completion_tokens * COMPLETION_RATIO) * MODEL_RATIO);

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
  const models = ['gpt-4o-audio-preview', 'gpt-4o-audio-preview-2024-12-17', 'gpt-4o'];
  await options.set('ModelRatio', JSON.stringify(Object.fromEntries(models.map((m) => [m, MODEL_RATIO]))));
  await options.set(
    'CompletionRatio',
    JSON.stringify(Object.fromEntries(models.map((m) => [m, COMPLETION_RATIO]))),
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
    { model: 'gpt-4o-audio-preview', audioRatio: 40 },
    { model: 'gpt-4o-audio-preview-2024-12-17', audioRatio: 16 },
    // not an audio model by name, but its usage reports audio tokens: those are not billed as text either
    { model: 'gpt-4o', audioRatio: 20 },
  ].flatMap((c) => [
    { ...c, stream: false, title: c.model },
    { ...c, stream: true, title: `${c.model} (stream)` },
  ]);

  it.each(table)('bills audio tokens at the audio ratio, once: $title', async (c) => {
    const user = await t.seedUser({ quota: START });
    const token = await t.seedToken(user.id, { remainQuota: START, unlimitedQuota: false });
    const channelBefore = await channelUsed();

    const { requestId, usage } = await send({ authorization: `Bearer sk-${token.key}` }, c.model, c.stream);
    expect(usage.prompt_tokens_details.audio_tokens).toBe(AUDIO_IN);
    expect(usage.completion_tokens_details.audio_tokens).toBe(AUDIO_OUT);
    const quota = audioBill(usage, c.audioRatio);
    // Far more than the same tokens billed as text: the audio tokens are not billed as text as well.
    expect(quota).toBeGreaterThan(textBill(usage) * 5);

    const log = await waitFor(
      async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0],
    );
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
      audio_ratio: c.audioRatio,
      audio_completion_ratio: AUDIO_COMPLETION_RATIO,
      model_ratio: MODEL_RATIO,
      completion_ratio: COMPLETION_RATIO,
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

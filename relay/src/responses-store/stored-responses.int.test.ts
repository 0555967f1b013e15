/**
 * Stored Responses through the official `openai` SDK, unchanged (docs/adr/0051): `responses.create` keeps what it
 * answered, `retrieve`, `inputItems.list` and `delete` read it back, and `previous_response_id` continues a chain
 * over an OpenAI, an Anthropic, a Gemini and an OpenAI chat-completions channel. Each fake upstream speaks its
 * provider's real wire, and the history each one receives is asserted in that provider's own shape: OpenAI's
 * Responses input items (https://platform.openai.com/docs/api-reference/responses/create), Anthropic's
 * `messages` (https://docs.anthropic.com/en/api/messages), Gemini's `contents`
 * (https://ai.google.dev/api/generate-content) and chat `messages`
 * (https://platform.openai.com/docs/api-reference/chat/create).
 */

import { storedResponses } from '@turnpike/core/db/schema/index';
import { purgeGovernanceRows } from '@turnpike/core/runtime/governance-retention';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRelayApp } from '../app.ts';
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from '../testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

const OPENAI_REPLY = DEFAULT_FAKE_BEHAVIOUR.reply;
const PROVIDER_REPLY = DEFAULT_PROVIDER_BEHAVIOUR.reply;
const DAY_MS = 24 * 3600 * 1000;

let t: RelayTestApp;
let fake: FakeOpenAi;
let providers: FakeProviders;
let baseURL: string;
let client: OpenAI;
/** How far the stored responses' clock is moved ahead of the real one. */
let clockAhead = 0;

async function newClient(): Promise<OpenAI> {
  const user = await t.seedUser({ quota: 50_000_000 });
  const token = await t.seedToken(user.id);
  return new OpenAI({ apiKey: `sk-${token.key}`, baseURL, maxRetries: 0 });
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  providers = await startFakeProviders({ apiKey: undefined });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify({ 'gpt-4o-mini': 1, 'claude-test': 1, 'gemini-test': 1, 'chat-only-model': 1 }),
  );
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: 'gpt-4o-mini' });
  await t.seedChannel({ key: 'sk-ant-api03-test', baseUrl: providers.url, models: 'claude-test', type: 14 });
  await t.seedChannel({ key: 'AIzaSy-test', baseUrl: providers.url, models: 'gemini-test', type: 24 });
  // An OpenAI-format upstream with chat completions only (FastGPT): a Responses call reaches it as chat.
  await t.seedChannel({ key: 'sk-chat-only', baseUrl: providers.url, models: 'chat-only-model', type: 22 });
  const relay = await t.startRelay({ responsesClock: () => Date.now() + clockAhead });
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
  client = await newClient();
}, 180_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), providers?.close()]);
});

const storedRow = async (id: string) =>
  (await t.runtime.deps.db.select().from(storedResponses).where(eq(storedResponses.id, id)))[0];

/** The text of an Anthropic content (a string or text blocks), a Gemini turn's parts, or a chat message's. */
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : '';

/** The conversation an upstream received, as role and text pairs. */
function turnsOf(body: Record<string, unknown>): [string, string][] {
  if (Array.isArray(body.contents))
    return (body.contents as { role: string; parts: unknown }[]).map((turn) => [
      turn.role,
      textOf(turn.parts),
    ]);
  return (body.messages as { role: string; content: unknown }[]).map((m) => [m.role, textOf(m.content)]);
}

describe('stored responses through the openai SDK', () => {
  it('keeps a response made with store:true: retrieve, input items and delete answer in OpenAI shapes', async () => {
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', store: true });
    expect(created.output_text).toBe(OPENAI_REPLY);

    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.object).toBe('response');
    expect(retrieved.output_text).toBe(OPENAI_REPLY);
    expect(retrieved.usage).toEqual(created.usage);

    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Say hello' }],
    });
    expect(items.data[0]?.id).toMatch(/^msg_/);

    await client.responses.delete(created.id);
    const gone = await client.responses.retrieve(created.id).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'invalid_request_error',
    });
    const again = await client.responses.delete(created.id).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('keeps a streamed OpenAI response as its completed event carried it', async () => {
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream it', stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.id).toMatch(/^resp_/);
    const retrieved = await client.responses.retrieve(completed!.id);
    expect(retrieved.output_text).toBe(OPENAI_REPLY);
    expect(retrieved.usage).toEqual(completed?.usage);
  });

  it('pages input items with limit, order and after as the SDK walks them', async () => {
    const input = ['one', 'two', 'three'].map((text) => ({ role: 'user' as const, content: text }));
    const created = await client.responses.create({ model: 'gpt-4o-mini', input });
    const page = await client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' });
    expect(page.data.map((item) => textOf((item as { content: unknown }).content))).toEqual(['one', 'two']);
    expect(page.has_more).toBe(true);
    const walked: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' }))
      walked.push(textOf((item as { content: unknown }).content));
    expect(walked).toEqual(['one', 'two', 'three']);
    // The default order is newest first, as OpenAI lists them.
    const newest = await client.responses.inputItems.list(created.id);
    expect(newest.data.map((item) => textOf((item as { content: unknown }).content))).toEqual([
      'three',
      'two',
      'one',
    ]);
    const refused = await client.responses.inputItems
      .list(created.id, { limit: 101 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("answers another user's response id with 404 and never continues it", async () => {
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'private', store: true });
    const stranger = await newClient();
    for (const call of [
      () => stranger.responses.retrieve(created.id),
      () => stranger.responses.inputItems.list(created.id),
      () => stranger.responses.delete(created.id),
    ])
      expect(await call().catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
    const upstreamCalls = fake.requests.length;
    const continued = (await stranger.responses
      .create({ model: 'gpt-4o-mini', input: 'and?', previous_response_id: created.id })
      .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
    expect(continued.code).toBe('previous_response_not_found');
    expect(continued.param).toBe('previous_response_id');
    expect(fake.requests.length).toBe(upstreamCalls);
    // The owner still has it.
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
  });

  it('keeps nothing of a response made with store:false', async () => {
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'forget me', store: false });
    const kept = await client.responses.create({ model: 'gpt-4o-mini', input: 'keep me' });
    // Rows are written in order: once the later one is in the database, the earlier would be too.
    await waitFor(() => storedRow(kept.id));
    expect(await storedRow(created.id)).toBeUndefined();
    expect(await client.responses.retrieve(created.id).catch((error: unknown) => error)).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('refuses an id the gateway never issued, on an OpenAI channel and on any other, before any upstream call', async () => {
    const before = fake.requests.length + providers.requests.length;
    for (const model of ['gpt-4o-mini', 'claude-test']) {
      const refused = (await client.responses
        .create({ model, input: 'hi', previous_response_id: 'resp_never_issued' })
        .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused.code).toBe('previous_response_not_found');
      expect(refused.message).toContain("Previous response with id 'resp_never_issued' not found.");
    }
    expect(fake.requests.length + providers.requests.length).toBe(before);
    // Text no id can be (a NUL byte, which the database refuses) is as unknown, never a 500.
    const odd = (await client.responses
      .create({ model: 'gpt-4o-mini', input: 'hi', previous_response_id: 'resp_\u0000x' })
      .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(odd.code).toBe('previous_response_not_found');
    for (const call of [
      () => client.responses.retrieve('resp_\u0000x'),
      () => client.responses.delete('resp_\u0000x'),
      () => client.responses.inputItems.list('resp_\u0000x'),
    ])
      expect(await call().catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('continues one chain over OpenAI, Anthropic, Gemini and chat-completions channels, each given the history in its own format', async () => {
    // 1. OpenAI answers and holds the response.
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'My name is Ada.' });
    // 2. The same OpenAI channel holds it: it gets the id, not the history.
    const second = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'I live in London.',
      previous_response_id: first.id,
    });
    expect(fake.requests.at(-1)?.body).toMatchObject({
      previous_response_id: first.id,
      input: 'I live in London.',
    });
    const history: [string, string][] = [
      ['user', 'My name is Ada.'],
      ['assistant', OPENAI_REPLY],
      ['user', 'I live in London.'],
      ['assistant', OPENAI_REPLY],
    ];

    // 3. Anthropic: the chain replayed as Messages turns.
    providers.requests.length = 0;
    const third = await client.responses.create({
      model: 'claude-test',
      input: 'What is my name?',
      previous_response_id: second.id,
    });
    expect(third.output_text).toBe(PROVIDER_REPLY);
    const toClaude = providers.requests.at(-1)!;
    expect(toClaude.path).toBe('/v1/messages');
    expect(turnsOf(toClaude.body)).toEqual([...history, ['user', 'What is my name?']]);
    history.push(['user', 'What is my name?'], ['assistant', PROVIDER_REPLY]);

    // 4. Gemini, streamed: the chain as `contents` with Gemini's `model` role.
    providers.requests.length = 0;
    const stream = await client.responses.create({
      model: 'gemini-test',
      input: 'Where do I live?',
      previous_response_id: third.id,
      stream: true,
    });
    let fourthId: string | undefined;
    for await (const event of stream) if (event.type === 'response.completed') fourthId = event.response.id;
    expect(fourthId).toBeDefined();
    const toGemini = providers.requests.at(-1)!;
    expect(toGemini.path).toContain('/models/gemini-test:streamGenerateContent');
    const geminiRole = (role: string) => (role === 'assistant' ? 'model' : role);
    expect(turnsOf(toGemini.body)).toEqual(
      [...history, ['user', 'Where do I live?'] as const].map(([role, text]) => [geminiRole(role), text]),
    );
    history.push(['user', 'Where do I live?'], ['assistant', PROVIDER_REPLY]);

    // 5. An OpenAI channel of chat completions only: the chain as chat messages.
    providers.requests.length = 0;
    const fifth = await client.responses.create({
      model: 'chat-only-model',
      input: 'Thanks.',
      previous_response_id: fourthId!,
    });
    const toChat = providers.requests.at(-1)!;
    expect(toChat.path).toBe('/v1/chat/completions');
    expect(turnsOf(toChat.body)).toEqual([...history, ['user', 'Thanks.']]);
    history.push(['user', 'Thanks.'], ['assistant', PROVIDER_REPLY]);

    // 6. Back on OpenAI: it never held the last id, so it gets the whole chain as Responses input items.
    const sixth = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'Bye.',
      previous_response_id: fifth.id,
    });
    const toOpenAi = fake.requests.at(-1)?.body as Record<string, unknown>;
    expect(toOpenAi).not.toHaveProperty('previous_response_id');
    const items = toOpenAi.input as { type: string; role: string; content: unknown }[];
    expect(items.every((item) => item.type === 'message')).toBe(true);
    expect(items.map((item) => [item.role, textOf(item.content)])).toEqual([...history, ['user', 'Bye.']]);
    // What the model said goes back as output text, what the user said as input text (OpenAI's item shapes).
    expect(items[0]?.content).toEqual([{ type: 'input_text', text: 'My name is Ada.' }]);
    expect(items[1]?.content).toEqual([{ type: 'output_text', text: OPENAI_REPLY, annotations: [] }]);

    // Each response lists its own input, and reads back wherever it was made.
    const listed = await client.responses.inputItems.list(third.id);
    expect(listed.data.map((item) => textOf((item as { content: unknown }).content))).toEqual([
      'What is my name?',
    ]);
    expect((await client.responses.retrieve(fourthId!)).output_text).toBe(PROVIDER_REPLY);
    expect((await client.responses.retrieve(sixth.id)).previous_response_id).toBe(fifth.id);
  });

  it("carries a tool call made on Anthropic and the client's answer to it on to Gemini", async () => {
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        description: 'Current weather of a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: false,
      },
    ];
    const asked = await client.responses.create({ model: 'claude-test', input: 'Weather in Paris?', tools });
    const call = asked.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) });
    providers.requests.length = 0;
    const answered = await client.responses.create({
      model: 'gemini-test',
      tools,
      previous_response_id: asked.id,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: '18 degrees, sunny' }],
    });
    expect(answered.output_text).toBe(PROVIDER_REPLY);
    const contents = providers.requests.at(-1)?.body.contents as {
      role: string;
      parts: Record<string, unknown>[];
    }[];
    const parts: Record<string, unknown>[] = contents.flatMap((turn) =>
      turn.parts.map((part) => ({ role: turn.role, ...part })),
    );
    expect(parts[0]).toMatchObject({ role: 'user', text: 'Weather in Paris?' });
    expect(parts.find((part) => part.functionCall)).toMatchObject({
      role: 'model',
      functionCall: { name: 'get_weather', args: { city: 'Paris' } },
    });
    const reply = parts.find((part) => part.functionResponse) as {
      functionResponse: Record<string, unknown>;
    };
    expect(reply.functionResponse.name).toBe('get_weather');
    expect(JSON.stringify(reply.functionResponse.response)).toContain('18 degrees, sunny');
  });

  // Relays share what they answered through Redis; the embedded default is one process, with nothing to share.
  it.runIf(process.env.TEST_REDIS_URL !== undefined)(
    'continues on one relay a chain another relay answered before that relay has written it',
    async () => {
      const other = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 600_000 });
      try {
        const otherURL = `${await other.listen({ port: 0, host: '127.0.0.1' })}/v1`;
        const otherClient = new OpenAI({ apiKey: client.apiKey, baseURL: otherURL, maxRetries: 0 });
        const first = await otherClient.responses.create({ model: 'claude-test', input: 'Remember 42.' });
        expect(await storedRow(first.id)).toBeUndefined();
        providers.requests.length = 0;
        await client.responses.create({
          model: 'gemini-test',
          input: 'Which number?',
          previous_response_id: first.id,
        });
        expect(turnsOf(providers.requests.at(-1)!.body)).toEqual([
          ['user', 'Remember 42.'],
          ['model', PROVIDER_REPLY],
          ['user', 'Which number?'],
        ]);
        expect((await client.responses.retrieve(first.id)).output_text).toBe(PROVIDER_REPLY);
      } finally {
        await other.close();
      }
    },
  );

  it('sends an id only an OpenAI channel holds (the gateway keeping none) to that channel, and refuses it elsewhere', async () => {
    await t.runtime.deps.options.set('ResponsesRetentionDays', '0');
    try {
      const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'hold this' });
      expect(await client.responses.retrieve(created.id).catch((error: unknown) => error)).toBeInstanceOf(
        OpenAI.NotFoundError,
      );
      await client.responses.create({
        model: 'gpt-4o-mini',
        input: 'more',
        previous_response_id: created.id,
      });
      expect(fake.requests.at(-1)?.body).toMatchObject({ previous_response_id: created.id, input: 'more' });
      const before = providers.requests.length;
      const refused = await client.responses
        .create({ model: 'claude-test', input: 'more', previous_response_id: created.id })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(providers.requests.length).toBe(before);
    } finally {
      await t.runtime.deps.options.set('ResponsesRetentionDays', '30');
    }
  });

  it('forgets a response after 30 days: not read back, not continued, and removed by the retention job', async () => {
    const created = await client.responses.create({ model: 'claude-test', input: 'short-lived' });
    await waitFor(() => storedRow(created.id));
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
    clockAhead = 29 * DAY_MS;
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
    try {
      clockAhead = 30 * DAY_MS + 1000;
      expect(await client.responses.retrieve(created.id).catch((error: unknown) => error)).toBeInstanceOf(
        OpenAI.NotFoundError,
      );
      const continued = await client.responses
        .create({ model: 'claude-test', input: 'and?', previous_response_id: created.id })
        .catch((error: unknown) => error);
      expect(continued).toBeInstanceOf(OpenAI.BadRequestError);
      await purgeGovernanceRows(t.runtime.deps, new Date(Date.now() + 29 * DAY_MS));
      expect(await storedRow(created.id)).toBeDefined();
      await purgeGovernanceRows(t.runtime.deps, new Date(Date.now() + clockAhead));
      expect(await storedRow(created.id)).toBeUndefined();
    } finally {
      clockAhead = 0;
    }
  });
});

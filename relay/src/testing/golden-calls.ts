/**
 * What the golden billing tests share (cache-write-duration.int.test.ts, price-shapes.int.test.ts): a relay with the
 * built-in prices in front of the fake upstreams, the three ways to Claude Sonnet 4.5 as channels of groups of their
 * own (Anthropic, Bedrock InvokeModel, Vertex AI rawPredict) and a caller per group, a call from a client of each wire
 * format through the official SDKs (or `fetch` where an SDK hides the response headers) returning the relay's
 * request id, and the charge of a call read from its consume log once the balance shows it.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { logs, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { EXAMPLE_AWS_ACCOUNT, type FakeClouds, newVertexAccount, startFakeClouds } from './fake-clouds.ts';
import { type FakeOpenAi, startFakeOpenAi } from './fake-openai.ts';
import { type FakeProviders, startFakeProviders } from './fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './relay-test-app.ts';
import { waitFor } from './wait.ts';

export const CLAUDE_SONNET_45 = 'claude-sonnet-4-5';

/** The groups whose only channel reaches Claude Sonnet 4.5 one way each. */
export const CLAUDE_ROUTES = ['anthropic', 'bedrock', 'vertex'] as const;
export type ClaudeRoute = (typeof CLAUDE_ROUTES)[number];

/**
 * Seeds the three Claude channels, each the only one of its group: Anthropic at the fake providers, Bedrock and
 * Vertex at the fake clouds (with AWS's example account and `vertex`'s key file). The Vertex channel serves
 * `vertexModels` too (Gemini models go to Vertex under their own names).
 */
async function seedClaudeRoutes(
  t: RelayTestApp,
  urls: { readonly providers: string; readonly clouds: string },
  vertex: ReturnType<typeof newVertexAccount>,
  vertexModels: readonly string[] = [],
): Promise<void> {
  const aws = EXAMPLE_AWS_ACCOUNT;
  const model = CLAUDE_SONNET_45;
  await t.seedChannel({
    type: 14,
    key: 'sk-ant-test',
    baseUrl: urls.providers,
    models: model,
    group: 'anthropic',
  });
  await t.seedChannel({
    type: 33,
    key: `${aws.accessKeyId}|${aws.secretAccessKey}|${aws.region}`,
    baseUrl: urls.clouds,
    models: model,
    group: 'bedrock',
    modelMapping: { [model]: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  });
  await t.seedChannel({
    type: 41,
    key: vertex.keyFile(`${urls.clouds}/token`),
    baseUrl: urls.clouds,
    other: 'us-east5',
    models: [model, ...vertexModels].join(','),
    group: 'vertex',
    modelMapping: { [model]: 'claude-sonnet-4-5@20250929' },
  });
}

/** One way a client asks `model`, as the caller of `group`; answers the relay's request id. */
export type ClientCall = (group: string, model: string) => Promise<string | null>;

const ASK = 'Summarise the cached document.';

/** The calls of each client wire format to a relay at `address`, with the key of each group's caller. */
export function clientCalls(address: string, keyOf: (group: string) => string) {
  const anthropic = (group: string) =>
    new Anthropic({ apiKey: keyOf(group), baseURL: address, maxRetries: 0 });
  const openAi = (group: string) =>
    new OpenAI({ apiKey: keyOf(group), baseURL: `${address}/v1`, maxRetries: 0 });
  return {
    'Anthropic Messages': async (group, model) => {
      const { response } = await anthropic(group)
        .messages.create({ model, max_tokens: 1024, messages: [{ role: 'user', content: ASK }] })
        .withResponse();
      return response.headers.get('x-request-id');
    },
    'Anthropic Messages, streamed': async (group, model) => {
      const stream = anthropic(group).messages.stream({
        model,
        max_tokens: 1024,
        messages: [{ role: 'user', content: ASK }],
      });
      await stream.finalMessage();
      const { response } = await stream.withResponse();
      return response.headers.get('x-request-id');
    },
    'OpenAI chat completions': async (group, model) => {
      const { response } = await openAi(group)
        .chat.completions.create({ model, messages: [{ role: 'user', content: ASK }] })
        .withResponse();
      return response.headers.get('x-request-id');
    },
    'OpenAI chat completions, streamed': async (group, model) => {
      const { data, response } = await openAi(group)
        .chat.completions.create({
          model,
          messages: [{ role: 'user', content: ASK }],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      for await (const _chunk of data) {
        // drain the stream
      }
      return response.headers.get('x-request-id');
    },
    'OpenAI Responses': async (group, model) => {
      const { response } = await openAi(group).responses.create({ model, input: ASK }).withResponse();
      return response.headers.get('x-request-id');
    },
    'OpenAI Responses, streamed': async (group, model) => {
      const { data, response } = await openAi(group)
        .responses.create({ model, input: ASK, stream: true })
        .withResponse();
      for await (const _event of data) {
        // drain the stream
      }
      return response.headers.get('x-request-id');
    },
    'Gemini generateContent': async (group, model) => {
      const gemini = new GoogleGenAI({ apiKey: keyOf(group), httpOptions: { baseUrl: address } });
      const answer = await gemini.models.generateContent({ model, contents: ASK });
      return answer.sdkHttpResponse?.headers?.['x-request-id'] ?? null;
    },
    // The SDK's stream does not show the response headers: the request as the SDK sends it.
    'Gemini streamGenerateContent': async (group, model) => {
      const response = await fetch(`${address}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': keyOf(group) },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: ASK }] }] }),
      });
      if (response.status !== 200) throw new Error(`the relay answered ${response.status}`);
      await response.text();
      return response.headers.get('x-request-id');
    },
  } satisfies Record<string, ClientCall>;
}
export type ClientShape = keyof ReturnType<typeof clientCalls>;

/** A client of each wire format, streamed where the clients most often stream. */
export const EVERY_CLIENT: readonly ClientShape[] = [
  'Anthropic Messages',
  'Anthropic Messages, streamed',
  'OpenAI chat completions',
  'OpenAI chat completions, streamed',
  'OpenAI Responses',
  'Gemini generateContent',
];

/** The fake upstreams a golden relay stands in front of. */
export interface GoldenFakes {
  readonly openAi: FakeOpenAi;
  readonly providers: FakeProviders;
  readonly clouds: FakeClouds;
}

export interface GoldenRelay extends GoldenFakes {
  readonly t: RelayTestApp;
  readonly address: string;
  readonly calls: ReturnType<typeof clientCalls>;
  /** The caller of a group: a user of 50,000,000 quota and a token of theirs. */
  callerOf(group: string): { readonly key: string; readonly userId: number };
  close(): Promise<void>;
}

/**
 * A relay on the built-in prices (every group at ratio 1) with the Claude routes, the channels `seed` adds, and a
 * caller in each of `groups`.
 */
export async function startGoldenRelay(options: {
  readonly groups: readonly string[];
  readonly vertexModels?: readonly string[];
  readonly seed?: (t: RelayTestApp, fakes: GoldenFakes) => Promise<void>;
}): Promise<GoldenRelay> {
  const vertex = newVertexAccount();
  const openAi = await startFakeOpenAi();
  const providers = await startFakeProviders();
  const clouds = await startFakeClouds({
    openAiUrl: openAi.url,
    providersUrl: providers.url,
    azureKey: 'unused-azure-key',
    vertexAccount: vertex,
    aws: { ...EXAMPLE_AWS_ACCOUNT, apiKey: 'unused' },
  });
  const fakes = { openAi, providers, clouds };
  const t = await createRelayTestApp();
  // The default price tables are under test: only the groups are added (each costs 1 × the model's price).
  const groupRatio = Object.fromEntries(['default', ...options.groups].map((group) => [group, 1]));
  await t.runtime.deps.options.set('GroupRatio', JSON.stringify(groupRatio));
  await seedClaudeRoutes(t, { providers: providers.url, clouds: clouds.url }, vertex, options.vertexModels);
  await options.seed?.(t, fakes);
  const relay = await t.startRelay();
  const address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const callers = new Map<string, { key: string; userId: number }>();
  for (const group of options.groups) {
    const user = await t.seedUser({ quota: 50_000_000, group });
    callers.set(group, { key: `sk-${(await t.seedToken(user.id)).key}`, userId: user.id });
  }
  const callerOf = (group: string) => {
    const caller = callers.get(group);
    if (caller === undefined) throw new Error(`no caller in group ${group}`);
    return caller;
  };
  return {
    ...fakes,
    t,
    address,
    calls: clientCalls(address, (group) => callerOf(group).key),
    callerOf,
    async close() {
      await t.close();
      await Promise.all([openAi.close(), providers.close(), clouds.close()]);
    },
  };
}

/** A user's balance as the database holds it. */
export const balanceOf = async (t: RelayTestApp, userId: number) =>
  (await t.runtime.deps.db.select().from(users).where(eq(users.id, userId)))[0]!.quota;

/**
 * Makes a call of the user's and answers its consume log's quota and `other`, once the user's balance shows it: the
 * quota must be what the user lost (no other call of the user runs at the same time).
 */
export async function chargeOf(t: RelayTestApp, userId: number, call: () => Promise<string | null>) {
  const before = await balanceOf(t, userId);
  const requestId = await call();
  const [log] = await waitFor(async () => {
    const rows = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(eq(logs.requestId, requestId ?? ''));
    return rows.length > 0 ? rows : undefined;
  });
  await waitFor(async () => ((await balanceOf(t, userId)) === before - log!.quota ? true : undefined));
  return { quota: log!.quota, other: JSON.parse(log!.other) as Record<string, unknown> };
}

/**
 * Files and batches through the relay with the official `openai` SDK, unchanged, against fake upstreams speaking
 * OpenAI's, Azure OpenAI's and Anthropic's batch wires: upload, list, retrieve, download and delete files; create,
 * retrieve until done, read the output and error files, cancel and list batches; each served line billed at the
 * provider's batch price (literals from the price pages), the held estimate given back once, under concurrency and
 * across relays; another user's file or batch is a 404.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { batches, logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRelayApp } from '../app.ts';
import { taskPollerOf } from '../tasks/register.ts';
import { type FakeBatchUpstream, startFakeBatchUpstream } from '../testing/fake-batch-upstream.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

// api-docs.deepseek.com pricing, deepseek-chat: $0.27 input (cache miss) / $1.10 output per 1M tokens; no batch price.
const DEEPSEEK_LINE = Math.round(((8 * 0.27 + 100 * 1.1) / 1e6) * 500_000);

/**
 * An OpenAI-compatible chat upstream (DeepSeek's API is OpenAI's chat completions): 8 prompt and 100 completion
 * tokens per answer, a 400 for a question containing "fail"; it notes how many calls it had at once.
 */
async function startFakeChat() {
  let inFlight = 0;
  const state = { inFlightMost: 0, calls: 0 };
  const server = createServer(async (request, response) => {
    inFlight += 1;
    state.calls += 1;
    state.inFlightMost = Math.max(state.inFlightMost, inFlight);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as {
      model: string;
      messages: { content: string }[];
    };
    await new Promise((resolve) => setImmediate(resolve));
    inFlight -= 1;
    if (body.messages[0]?.content.includes('fail')) {
      response.writeHead(400, { 'content-type': 'application/json' });
      return response.end(
        JSON.stringify({ error: { message: 'bad question', type: 'invalid_request_error' } }),
      );
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-ds',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: `re: ${body.messages[0]?.content}` },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 8, completion_tokens: 100, total_tokens: 108 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

const START = 10_000_000;
/** Every served line's usage, as the fakes report it: a short question, and the whole `max_tokens` of 1000. */
const USAGE = { input: 8, output: 1000 };
/** Quota of a USD amount (500,000 quota per USD, rounded half up as every bill is). */
const quotaOfUsd = (usd: number) => Math.round(usd * 500_000);
// openai.com/api/pricing, gpt-4o-mini: $0.15 input / $0.60 output per 1M tokens; Batch API $0.075 / $0.30.
const GPT_4O_MINI_BATCH_LINE = quotaOfUsd((8 * 0.075 + 1000 * 0.3) / 1e6);
// docs.anthropic.com pricing, Claude Sonnet 4.5: $3 / $15 per MTok; batch processing $1.50 / $7.50.
const SONNET_BATCH_LINE = quotaOfUsd((8 * 1.5 + 1000 * 7.5) / 1e6);

let t: RelayTestApp;
let openai: FakeBatchUpstream;
let azure: FakeBatchUpstream;
let anthropic: FakeBatchUpstream;
let baseURL: string;
let deepseek: { url: string; inFlightMost: number; calls: number; close(): Promise<void> };

const db = () => t.runtime.deps.db;

async function payer(fields: { quota?: number; group?: string } = {}) {
  const user = await t.seedUser({
    quota: fields.quota ?? START,
    ...(fields.group ? { group: fields.group } : {}),
  });
  const token = await t.seedToken(user.id);
  const client = new OpenAI({ apiKey: `sk-${token.key}`, baseURL, maxRetries: 0 });
  return { user, token, client };
}

async function balanceOf(id: number): Promise<number> {
  const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
  return row?.quota ?? Number.NaN;
}

const consumeLogs = (userId: number) =>
  db()
    .select()
    .from(logs)
    .where(and(eq(logs.userId, userId), eq(logs.type, LogType.Consume)));

async function batchRow(id: string) {
  const [row] = await db().select().from(batches).where(eq(batches.id, id));
  if (!row) throw new Error(`no batch ${id}`);
  return row;
}

const chatLine = (customId: string, model = 'gpt-4o-mini') =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `question ${customId}` }], max_tokens: 1000 },
  });

async function uploadBatchFile(client: OpenAI, ids: string[], model = 'gpt-4o-mini') {
  const content = `${ids.map((id) => chatLine(id, model)).join('\n')}\n`;
  return client.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' });
}

async function createBatch(client: OpenAI, ids: string[], model = 'gpt-4o-mini') {
  const file = await uploadBatchFile(client, ids, model);
  return client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
}

const poll = () => taskPollerOf(t.relay).runOnce();

beforeAll(async () => {
  t = await createRelayTestApp();
  const { options } = t.runtime.deps;
  await options.set(
    'ModelRatio',
    JSON.stringify({ 'gpt-4o-mini': 0.075, 'claude-sonnet-4-5': 1.5, 'deepseek-chat': 0.27 / 2 }),
  );
  await options.set(
    'CompletionRatio',
    JSON.stringify({ 'gpt-4o-mini': 4, 'claude-sonnet-4-5': 5, 'deepseek-chat': 1.1 / 0.27 }),
  );
  await options.set('GroupRatio', JSON.stringify({ default: 1, azure: 1, claude: 1, deepseek: 1 }));
  const usageOf = () => USAGE;
  openai = await startFakeBatchUpstream({ kind: 'openai', key: 'sk-openai-upstream', usageOf });
  azure = await startFakeBatchUpstream({ kind: 'azure', key: 'azure-key', usageOf });
  anthropic = await startFakeBatchUpstream({ kind: 'anthropic', key: 'sk-ant-upstream', usageOf });
  await t.seedChannel({
    type: 1,
    key: 'sk-openai-upstream',
    baseUrl: openai.url,
    models: 'gpt-4o-mini',
    modelMapping: { 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' },
  });
  await t.seedChannel({
    type: 3,
    key: 'azure-key',
    baseUrl: azure.url,
    models: 'gpt-4o-mini',
    group: 'azure',
  });
  await t.seedChannel({
    type: 14,
    key: 'sk-ant-upstream',
    baseUrl: anthropic.url,
    models: 'claude-sonnet-4-5',
    group: 'claude',
  });
  deepseek = await startFakeChat();
  await t.seedChannel({
    type: 43,
    key: 'sk-deepseek',
    baseUrl: deepseek.url,
    models: 'deepseek-chat',
    group: 'deepseek',
  });
  const relay = await t.startRelay();
  baseURL = `${await relay.listen({ port: 0, host: '127.0.0.1' })}/v1`;
}, 300_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), azure?.close(), anthropic?.close(), deepseek?.close()]);
});

describe('files', () => {
  it('uploads, lists, retrieves, downloads and deletes a file, and another user sees none of it', async () => {
    const { client } = await payer();
    const { client: stranger } = await payer();
    const content = `${chatLine('a')}\n${chatLine('b')}\n`;
    const file = await client.files.create({
      file: await toFile(Buffer.from(content), 'input.jsonl'),
      purpose: 'batch',
    });
    expect(file).toMatchObject({
      object: 'file',
      purpose: 'batch',
      filename: 'input.jsonl',
      bytes: Buffer.byteLength(content),
      status: 'processed',
    });
    expect(file.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id });
    expect(await (await client.files.content(file.id)).text()).toBe(content);
    const listed = [];
    for await (const item of client.files.list({ purpose: 'batch' })) listed.push(item.id);
    expect(listed).toEqual([file.id]);
    for (const call of [
      () => stranger.files.retrieve(file.id),
      () => stranger.files.content(file.id),
      () => stranger.files.delete(file.id),
    ])
      await expect(call()).rejects.toMatchObject({ status: 404 });
    const strangers = [];
    for await (const item of stranger.files.list()) strangers.push(item.id);
    expect(strangers).toEqual([]);
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a batch file with broken lines, naming each line, and keeps nothing', async () => {
    const { client } = await payer();
    const content = `${chatLine('a')}\n{oops\n${chatLine('a')}\n`;
    const refused = await client.files
      .create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const { message, error } = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(message).toContain('line 2: this line is not valid JSON');
    expect(message).toContain('line 3: the custom_id "a" is used on an earlier line');
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'file' });
    const kept = [];
    for await (const item of client.files.list()) kept.push(item.id);
    expect(kept).toEqual([]);
  });

  it('refuses an unknown purpose', async () => {
    const { client } = await payer();
    await expect(
      client.files.create({ file: await toFile(Buffer.from('x'), 'a.txt'), purpose: 'nonsense' as 'batch' }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('batches on an OpenAI channel, at the batch price', () => {
  it('holds an estimate, runs through OpenAI Batch API, brings the output back and bills the served lines once', async () => {
    const { user, client } = await payer();
    const batch = await createBatch(client, ['q-1', 'q-2', 'q-3', 'fail-1']);
    expect(batch).toMatchObject({
      object: 'batch',
      endpoint: '/v1/chat/completions',
      status: 'validating',
      completion_window: '24h',
    });
    expect(batch.request_counts).toEqual({ total: 4, completed: 0, failed: 0 });
    const row = await batchRow(batch.id);
    expect(row.held).toBeGreaterThan(4 * GPT_4O_MINI_BATCH_LINE);
    expect(await balanceOf(user.id)).toBe(START - row.held);
    // The upstream got its own file, with the channel's model mapping on every line.
    const upstream = openai.batches.get(row.upstreamId);
    expect(upstream?.lines.map((line) => [line.custom_id, (line.body as { model: string }).model])).toEqual([
      ['q-1', 'gpt-4o-mini-2024-07-18'],
      ['q-2', 'gpt-4o-mini-2024-07-18'],
      ['q-3', 'gpt-4o-mini-2024-07-18'],
      ['fail-1', 'gpt-4o-mini-2024-07-18'],
    ]);
    expect(openai.requests.find((r) => r.path === '/v1/files')?.headers.authorization).toBe(
      'Bearer sk-openai-upstream',
    );

    openai.start(row.upstreamId);
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ status: 'in_progress' });
    openai.complete(row.upstreamId);
    const done = await client.batches.retrieve(batch.id);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 4, completed: 3, failed: 1 },
    });
    expect(done.completed_at).toBeGreaterThan(0);
    const output = (await (await client.files.content(done.output_file_id ?? '')).text()).trim().split('\n');
    expect(output.map((line) => JSON.parse(line).custom_id)).toEqual(['q-1', 'q-2', 'q-3']);
    expect(JSON.parse(output[0] ?? '{}').response.body.choices[0].message.content).toBe('answer to q-1');
    const errors = (await (await client.files.content(done.error_file_id ?? '')).text()).trim().split('\n');
    expect(errors.map((line) => JSON.parse(line).custom_id)).toEqual(['fail-1']);

    // Three lines served at $0.00045 each; the failed one is free; the rest of the hold came back.
    expect(await balanceOf(user.id)).toBe(START - 3 * GPT_4O_MINI_BATCH_LINE);
    const billed = await consumeLogs(user.id);
    expect(GPT_4O_MINI_BATCH_LINE).toBe(150);
    expect(billed.map((log) => log.quota)).toEqual([150, 150, 150]);
    expect(billed.map((log) => [log.promptTokens, log.completionTokens])).toEqual([
      [8, 1000],
      [8, 1000],
      [8, 1000],
    ]);
    // Reading it again, and more poll passes, change nothing.
    await poll();
    await client.batches.retrieve(batch.id);
    expect(await balanceOf(user.id)).toBe(START - 3 * GPT_4O_MINI_BATCH_LINE);
    expect(await consumeLogs(user.id)).toHaveLength(3);
    const [account] = await db().select().from(users).where(eq(users.id, user.id));
    expect(account?.usedQuota).toBe(3 * GPT_4O_MINI_BATCH_LINE);
  });

  it("answers another user's batch and its files with 404", async () => {
    const { client } = await payer();
    const { client: stranger } = await payer();
    const batch = await createBatch(client, ['x-1']);
    openai.complete((await batchRow(batch.id)).upstreamId);
    const done = await client.batches.retrieve(batch.id);
    await expect(stranger.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.batches.cancel(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.files.content(done.output_file_id ?? '')).rejects.toMatchObject({ status: 404 });
    await expect(
      stranger.batches.create({
        input_file_id: batch.input_file_id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('cancels: the lines served before the cancel are billed, the rest of the hold comes back', async () => {
    const { user, client } = await payer();
    const batch = await createBatch(client, ['c-1', 'c-2', 'c-3', 'c-4']);
    const upstreamId = (await batchRow(batch.id)).upstreamId;
    openai.start(upstreamId);
    expect(await client.batches.cancel(batch.id)).toMatchObject({ status: 'cancelling' });
    expect(openai.batches.get(upstreamId)?.status).toBe('cancelling');
    openai.finishCancel(upstreamId, 1);
    await poll();
    const cancelled = await client.batches.retrieve(batch.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', request_counts: { total: 4, completed: 1 } });
    expect(cancelled.cancelled_at).toBeGreaterThan(0);
    expect(await balanceOf(user.id)).toBe(START - GPT_4O_MINI_BATCH_LINE);
    expect((await consumeLogs(user.id)).map((log) => log.quota)).toEqual([GPT_4O_MINI_BATCH_LINE]);
    await expect(client.batches.cancel(batch.id)).rejects.toMatchObject({ status: 409 });
  });

  it('lists the caller’s batches, newest first', async () => {
    const { client } = await payer();
    const first = await createBatch(client, ['l-1']);
    const second = await createBatch(client, ['l-2']);
    const listed = [];
    for await (const item of client.batches.list()) listed.push(item.id);
    expect(new Set(listed)).toEqual(new Set([first.id, second.id]));
  });

  it('refuses a batch the balance cannot hold, and holds nothing', async () => {
    const { user, client } = await payer({ quota: 100 });
    const refused = await createBatch(client, ['p-1']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(await balanceOf(user.id)).toBe(100);
  });
});

describe('batches on Azure OpenAI and Anthropic channels', () => {
  it('runs through Azure’s Batch API: its paths, api-version, key header, deployment names and urls', async () => {
    const { user, client } = await payer({ group: 'azure' });
    const batch = await createBatch(client, ['z-1', 'z-2']);
    const row = await batchRow(batch.id);
    const upload = azure.requests.find((r) => r.method === 'POST' && r.path === '/openai/files');
    expect(upload?.headers['api-key']).toBe('azure-key');
    expect(
      azure.batches
        .get(row.upstreamId)
        ?.lines.map((line) => [line.url, (line.body as { model: string }).model]),
    ).toEqual([
      ['/chat/completions', 'gpt-4o-mini'],
      ['/chat/completions', 'gpt-4o-mini'],
    ]);
    azure.complete(row.upstreamId);
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ status: 'completed' });
    expect(await balanceOf(user.id)).toBe(START - 2 * GPT_4O_MINI_BATCH_LINE);
  });

  it('runs a chat batch through Anthropic’s Message Batches and answers chat completions, at the batch price', async () => {
    const { user, client } = await payer({ group: 'claude' });
    const batch = await createBatch(client, ['m-1', 'fail-m', 'm-2'], 'claude-sonnet-4-5');
    const row = await batchRow(batch.id);
    const sent = anthropic.batches.get(row.upstreamId);
    expect(sent?.lines[0]).toMatchObject({
      custom_id: 'm-1',
      params: { model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user' }] },
    });
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ status: 'in_progress' });
    anthropic.complete(row.upstreamId);
    const done = await client.batches.retrieve(batch.id);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 2, failed: 1 },
    });
    const output = (await (await client.files.content(done.output_file_id ?? '')).text()).trim().split('\n');
    const first = JSON.parse(output[0] ?? '{}');
    expect(first).toMatchObject({
      custom_id: 'm-1',
      response: {
        status_code: 200,
        body: { object: 'chat.completion', choices: [{ message: { content: 'answer to m-1' } }] },
      },
    });
    const errors = (await (await client.files.content(done.error_file_id ?? '')).text()).trim().split('\n');
    expect(JSON.parse(errors[0] ?? '{}')).toMatchObject({
      custom_id: 'fail-m',
      error: { code: 'invalid_request_error' },
    });
    expect(await balanceOf(user.id)).toBe(START - 2 * SONNET_BATCH_LINE);
    expect((await consumeLogs(user.id)).map((log) => log.quota)).toEqual([
      SONNET_BATCH_LINE,
      SONNET_BATCH_LINE,
    ]);
  });
});

describe('batches the gateway runs itself, on a channel without a Batch API', () => {
  it('answers the lines a few at a time in the background, at the normal price, and keeps output and errors', async () => {
    const { user, client } = await payer({ group: 'deepseek' });
    const ids = ['d-1', 'd-2', 'fail-d', 'd-3', 'd-4', 'd-5'];
    const batch = await createBatch(client, ids, 'deepseek-chat');
    expect((await batchRow(batch.id)).mode).toBe('gateway');
    const held = (await batchRow(batch.id)).held;
    expect(await balanceOf(user.id)).toBe(START - held);
    // A read does not run lines; the lease holder's pass does.
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ status: 'validating' });
    expect(deepseek.calls).toBe(0);
    await poll();
    expect(deepseek.inFlightMost).toBeLessThanOrEqual(2);
    const done = await client.batches.retrieve(batch.id);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 6, completed: 5, failed: 1 },
    });
    const output = (await (await client.files.content(done.output_file_id ?? '')).text()).trim().split('\n');
    expect(output.map((line) => JSON.parse(line).custom_id)).toEqual(['d-1', 'd-2', 'd-3', 'd-4', 'd-5']);
    expect(JSON.parse(output[0] ?? '{}').response.body.choices[0].message.content).toBe('re: question d-1');
    const errors = (await (await client.files.content(done.error_file_id ?? '')).text()).trim().split('\n');
    expect(JSON.parse(errors[0] ?? '{}')).toMatchObject({
      custom_id: 'fail-d',
      response: { status_code: 400 },
    });
    expect(DEEPSEEK_LINE).toBe(56);
    expect(await balanceOf(user.id)).toBe(START - 5 * DEEPSEEK_LINE);
    expect((await consumeLogs(user.id)).map((log) => log.quota)).toEqual(Array(5).fill(DEEPSEEK_LINE));
  });

  it('cancelled before its lines ran, gives the whole hold back and bills nothing', async () => {
    const { user, client } = await payer({ group: 'deepseek' });
    const batch = await createBatch(client, ['e-1', 'e-2'], 'deepseek-chat');
    expect(await client.batches.cancel(batch.id)).toMatchObject({ status: 'cancelled' });
    await poll();
    expect(await balanceOf(user.id)).toBe(START);
    expect(await consumeLogs(user.id)).toEqual([]);
  });
});

describe('which models take the batch price', () => {
  it('says so in /v1/models: true where a Batch API channel serves the model, false where the gateway runs it', async () => {
    const { client } = await payer();
    expect(await client.models.retrieve('gpt-4o-mini')).toMatchObject({
      id: 'gpt-4o-mini',
      batch_price: true,
    });
    const { client: deepseekUser } = await payer({ group: 'deepseek' });
    const listed = await deepseekUser.models.list();
    expect(listed.data).toEqual([expect.objectContaining({ id: 'deepseek-chat', batch_price: false })]);
  });
});

describe('batch money', () => {
  it('under concurrent creates, holds no more than the balance; the served lines × price = the drop = the logs', async () => {
    const { user, client } = await payer({ quota: 1000 });
    const tries = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => createBatch(client, [`k-${i}-1`, `k-${i}-2`])),
    );
    const accepted = tries.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length).toBeLessThan(8);
    const rows = await Promise.all(accepted.map((b) => batchRow(b.id)));
    expect(rows.reduce((sum, row) => sum + row.held, 0)).toBeLessThanOrEqual(1000);
    for (const row of rows) openai.complete(row.upstreamId);
    const second = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await second.ready();
    try {
      // Two relays' pollers and many reads see the ends at once.
      await Promise.all([
        poll(),
        taskPollerOf(second).runOnce(),
        ...accepted.flatMap((b) => [
          client.batches.retrieve(b.id),
          second.inject({
            method: 'GET',
            url: `/v1/batches/${b.id}`,
            headers: { authorization: `Bearer ${client.apiKey}` },
          }),
        ]),
      ]);
    } finally {
      await second.close();
    }
    const served = accepted.length * 2;
    expect(await balanceOf(user.id)).toBe(1000 - served * GPT_4O_MINI_BATCH_LINE);
    const billed = await consumeLogs(user.id);
    expect(billed).toHaveLength(served);
    expect(billed.reduce((sum, log) => sum + log.quota, 0)).toBe(served * GPT_4O_MINI_BATCH_LINE);
  });

  it('a relay gone mid-batch leaves it to another, which settles it once', async () => {
    const { user, client } = await payer();
    const first = await buildRelayApp(t.runtime.deps, { flushIntervalMs: 20 });
    await first.ready();
    const created = await first.inject({
      method: 'POST',
      url: '/v1/batches',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      payload: {
        input_file_id: (await uploadBatchFile(client, ['g-1', 'g-2', 'g-3'])).id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      },
    });
    expect(created.statusCode).toBe(200);
    const id = created.json<{ id: string }>().id;
    const row = await batchRow(id);
    await first.close();
    openai.complete(row.upstreamId);
    await waitFor(async () => ((await poll()).leader ? true : undefined));
    expect((await batchRow(id)).status).toBe('completed');
    expect(await balanceOf(user.id)).toBe(START - 3 * GPT_4O_MINI_BATCH_LINE);
    expect(await consumeLogs(user.id)).toHaveLength(3);
  });
});

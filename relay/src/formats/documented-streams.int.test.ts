/**
 * The recorded and documented streams of documented-streams.test.ts (`__documented__/`) served byte for byte by a
 * local upstream to a listening relay, read by the official SDKs as clients of each format: what the client sees
 * (text, tool call, finish reason, usage) and what the relay logs and bills are the numbers the documents state.
 * Same format on both sides (a Responses client on an OpenAI channel) passes the stream unread; different formats
 * go through the canonical shape (an Anthropic client on an OpenAI channel, OpenAI clients on a Gemini channel).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { waitFor } from '../testing/wait.ts';

const documented = (name: string): string =>
  readFileSync(path.join(import.meta.dirname, '__documented__', name), 'utf8');

/**
 * Which recorded stream answers a call: by the model the upstream is asked for. OpenAI's Responses example ends
 * with its last `data:` line, as a document prints it; the blank line that closes an event on the wire is added.
 */
const STREAMS: Record<string, string> = {
  'gpt-4o-2024-08-06': documented('openai-chat-tool-call.sse'),
  'gpt-5.4': `${documented('openai-responses-streaming.sse')}\n`,
  'gemini-2.0-flash': documented('gemini-basic-reply-short.sse'),
  'gemini-2.5-flash': documented('gemini-thinking-function-call.sse'),
};

let t: RelayTestApp;
let upstream: Server;
let address: string;
let key: string;

/** A local upstream that answers every call with the recorded stream of its model, in 5-byte writes. */
async function startRecordedUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (piece: Buffer) => {
      raw += piece.toString('utf8');
    });
    request.on('end', () => {
      const model = /models\/([^:/]+):/.exec(request.url ?? '')?.[1] ?? JSON.parse(raw || '{}').model;
      const stream = STREAMS[String(model)];
      if (stream === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `no recorded stream for ${model}` } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const bytes = Buffer.from(stream, 'utf8');
      for (let at = 0; at < bytes.length; at += 5) response.write(bytes.subarray(at, at + 5));
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const logOf = (model: string) =>
  waitFor(async () => (await t.runtime.deps.db.select().from(logs).where(eq(logs.modelName, model)))[0]);

beforeAll(async () => {
  const recorded = await startRecordedUpstream();
  upstream = recorded.server;
  t = await createRelayTestApp();
  await t.runtime.deps.options.set(
    'ModelRatio',
    JSON.stringify(Object.fromEntries(Object.keys(STREAMS).map((model) => [model, 1]))),
  );
  await t.seedChannel({ key: 'sk-upstream', baseUrl: recorded.url, models: 'gpt-4o-2024-08-06,gpt-5.4' });
  await t.seedChannel({
    key: 'AIzaSy-recorded',
    baseUrl: recorded.url,
    models: 'gemini-2.0-flash,gemini-2.5-flash',
    type: 24,
  });
  const relay = await t.startRelay();
  address = await relay.listen({ port: 0, host: '127.0.0.1' });
  const user = await t.seedUser({ quota: 50_000_000 });
  key = `sk-${(await t.seedToken(user.id)).key}`;
});

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

const openAiClient = () => new OpenAI({ apiKey: key, baseURL: `${address}/v1`, maxRetries: 0 });

describe('documented streams through the relay, read by the SDKs', () => {
  it("a Responses client on an OpenAI channel gets OpenAI's documented stream as it is, billed 37 in / 11 out", async () => {
    const stream = await openAiClient().responses.create({
      model: 'gpt-5.4',
      instructions: 'You are a helpful assistant.',
      input: 'Hello!',
      stream: true,
    });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completed?.output[0]).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text: 'Hi there! How can I assist you today?' }],
    });
    expect(completed?.usage).toMatchObject({ input_tokens: 37, output_tokens: 11, total_tokens: 48 });
    expect(await logOf('gpt-5.4')).toMatchObject({ promptTokens: 37, completionTokens: 11 });
  });

  it("an Anthropic client on an OpenAI channel gets OpenAI's recorded tool call as a tool_use block, billed 76 in / 24 out", async () => {
    const client = new Anthropic({ apiKey: key, baseURL: address, maxRetries: 0 });
    const message = await client.messages
      .stream({
        model: 'gpt-4o-2024-08-06',
        max_tokens: 200,
        messages: [{ role: 'user', content: "What's the weather like in Edinburgh?" }],
        tools: [
          {
            name: 'GetWeatherArgs',
            input_schema: {
              type: 'object',
              properties: {
                city: { type: 'string' },
                country: { type: 'string' },
                units: { type: 'string' },
              },
            },
          },
        ],
      })
      .finalMessage();
    expect(message.content).toEqual([
      {
        type: 'tool_use',
        id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
        name: 'GetWeatherArgs',
        input: { city: 'Edinburgh', country: 'UK', units: 'c' },
      },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 76, output_tokens: 24 });
    expect(await logOf('gpt-4o-2024-08-06')).toMatchObject({ promptTokens: 76, completionTokens: 24 });
  });

  it("an OpenAI chat client on a Gemini channel gets Gemini's recorded reply, stop and the usage chunk 7 + 10 = 17", async () => {
    const stream = await openAiClient().chat.completions.create({
      model: 'gemini-2.0-flash',
      messages: [{ role: 'user', content: 'What is the capital of Wyoming?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('The capital of Wyoming is **Cheyenne**.\n');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 10, total_tokens: 17 });
    expect(await logOf('gemini-2.0-flash')).toMatchObject({ promptTokens: 7, completionTokens: 10 });
  });

  it("a Responses client on a Gemini channel gets Gemini's recorded `now` call as a function_call item, billed 38 in / 6 + 168 thoughts out", async () => {
    const stream = await openAiClient().responses.create({
      model: 'gemini-2.5-flash',
      input: "How many days until New Year's Eve?",
      tools: [
        { type: 'function', name: 'now', parameters: { type: 'object', properties: {} }, strict: false },
      ],
      stream: true,
    });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.output.filter((item) => item.type === 'function_call')).toMatchObject([
      { type: 'function_call', name: 'now', arguments: '{}' },
    ]);
    expect(completed?.usage).toMatchObject({
      input_tokens: 38,
      output_tokens: 174,
      output_tokens_details: { reasoning_tokens: 168 },
      total_tokens: 212,
    });
    expect(await logOf('gemini-2.5-flash')).toMatchObject({ promptTokens: 38, completionTokens: 174 });
  });
});

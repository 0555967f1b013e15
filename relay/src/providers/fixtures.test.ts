/**
 * The providers' recorded fixtures (`<provider>/__fixtures__/*.json`), each naming the page it follows
 * (`reference`) and where its upstream side came from (a `source` URL, or its place on the list of fixtures written
 * by us, testing/fixture-provenance.ts): the request a provider builds (URL, credential header,
 * body), its answer read back into the canonical shape with its usage, its stream in its real framing (AWS's binary
 * event stream, framed by testing/event-stream.ts, held to AWS's published vectors in
 * bedrock/event-stream-vectors.test.ts) decoded into canonical chunks, and its errors classified.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultOptionValue } from '@turnpike/core/options/registry';
import { describe, expect, it } from 'vitest';
import type { ChannelView } from '../contract.ts';
import { anthropicFormat } from '../formats/anthropic/format.ts';
import type { Json } from '../formats/canonical.ts';
import type { FormatOptions } from '../formats/format.ts';
import { createSseParser } from '../sse.ts';
import { createChunkCollector } from '../testing/chat-chunks.ts';
import { bedrockChunk, converseEvent } from '../testing/fake-clouds.ts';
import { provenanceProblem } from '../testing/fixture-provenance.ts';
import type { UpstreamBody } from '../upstream/client.ts';
import { converseFormat } from './bedrock/converse.ts';
import { eventStreamToSse } from './bedrock/event-stream.ts';
import { providerFor } from './registry.ts';

const options: FormatOptions = { get: (key) => defaultOptionValue(key) };

interface Fixture {
  readonly source?: string;
  readonly format?: 'anthropic' | 'converse';
  readonly channel?: { type: number; key: string; baseUrl: string; other: string };
  readonly upstreamModel?: string;
  readonly isStream?: boolean;
  readonly chatRequest?: Json;
  readonly upstreamUrl?: string;
  readonly upstreamHeaders?: Record<string, string>;
  readonly upstreamRequest?: Json;
  readonly upstreamAnswer?: Json;
  readonly chatAnswer?: Json;
  readonly usage?: Json;
  readonly upstreamEvents?: { type: string; payload: Json }[];
  readonly expected?: {
    content: string;
    toolCalls: { id: string; name: string; arguments: string }[];
    finishReason: string;
    finished: boolean;
    usage: Json;
  };
  readonly upstreamError?: { status: number; headers: Record<string, string>; body: Json };
  readonly expectedError?: Json;
  readonly expectedErrorMessage?: string;
}

const viewOf = (channel: NonNullable<Fixture['channel']>): ChannelView => ({
  id: 1,
  ...channel,
  headers: {},
  organization: undefined,
  paramOverride: undefined,
});

const bodyOf = (pieces: Uint8Array[]): UpstreamBody => ({
  async *[Symbol.asyncIterator]() {
    for (const piece of pieces) yield piece;
  },
  ended: true,
});

/** Every provider folder with recorded fixtures (Vertex's are replayed by testing/fake-clouds.ts). */
const fixtureDirs = readdirSync(import.meta.dirname).filter((name) =>
  existsSync(path.join(import.meta.dirname, name, '__fixtures__')),
);

describe('provider fixtures', () => {
  it('are the ones this file and the fake clouds replay', () => {
    expect(fixtureDirs).toEqual(['azure', 'bedrock', 'vertex']);
  });
  for (const provider of fixtureDirs)
    for (const file of readdirSync(path.join(import.meta.dirname, provider, '__fixtures__')))
      it(`${provider}/${file}: names where its upstream side came from`, () => {
        const text = readFileSync(path.join(import.meta.dirname, provider, '__fixtures__', file), 'utf8');
        expect(
          provenanceProblem(`providers/${provider}/__fixtures__/${file}`, JSON.parse(text)),
        ).toBeUndefined();
      });
});

for (const provider of ['azure', 'bedrock']) {
  const dir = path.join(import.meta.dirname, provider, '__fixtures__');
  describe(`${provider} fixtures`, () => {
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
      const fixture = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Fixture;
      const { channel, chatRequest, upstreamModel } = fixture;
      const selected = channel && upstreamModel ? providerFor(channel.type, upstreamModel) : undefined;
      if (channel && chatRequest && selected) {
        it(`${file}: builds the provider's request`, async () => {
          const call = await selected.buildRequest(viewOf(channel), {
            endpoint: 'chat',
            payload: { kind: 'json', body: chatRequest },
            upstreamModel: upstreamModel ?? '',
            isStream: fixture.isStream ?? false,
            options,
          });
          expect(call.url).toBe(fixture.upstreamUrl);
          expect(call.headers).toMatchObject(fixture.upstreamHeaders ?? {});
          if (fixture.upstreamRequest)
            expect(JSON.parse(call.body as string)).toEqual(fixture.upstreamRequest);
        });
      }
      if (selected && fixture.upstreamAnswer && fixture.chatAnswer) {
        it(`${file}: reads the provider's answer as a chat answer with its usage`, () => {
          const { answer, usage } = selected.format.answerToChat(fixture.upstreamAnswer as Json, 'model');
          expect(answer).toMatchObject(fixture.chatAnswer as Json);
          expect(usage).toMatchObject(fixture.usage as Json);
        });
      }
      if (selected && fixture.upstreamError) {
        it(`${file}: classifies the provider's error`, () => {
          const { status, headers, body } = fixture.upstreamError!;
          const error = selected.readError(status, JSON.stringify(body), headers);
          expect(error).toMatchObject(fixture.expectedError as Json);
          expect(error.message).toContain(fixture.expectedErrorMessage);
        });
      }
      if (fixture.upstreamEvents && fixture.expected) {
        it(`${file}: decodes the binary event stream into canonical chunks with the usage`, async () => {
          const frames = fixture.upstreamEvents!.map((event) =>
            event.type === 'chunk' ? bedrockChunk(event.payload) : converseEvent(event.type, event.payload),
          );
          // One piece per three bytes: messages arrive cut anywhere.
          const joined = Buffer.concat(frames);
          const pieces: Uint8Array[] = [];
          for (let at = 0; at < joined.length; at += 3) pieces.push(joined.subarray(at, at + 3));
          const decoder = (fixture.format === 'converse' ? converseFormat : anthropicFormat).streamToChat(
            'model',
          );
          const parser = createSseParser();
          const collector = createChunkCollector();
          let finished = false;
          for await (const piece of eventStreamToSse(bodyOf(pieces))) {
            for (const event of parser.push(piece)) {
              const decoded = decoder.push(event);
              if (decoded.finished) finished = true;
              for (const chunk of decoded.chunks) collector.push(chunk);
            }
          }
          expect({ ...collector.seen(), finished }).toEqual({
            content: fixture.expected!.content,
            reasoning: '',
            toolCalls: fixture.expected!.toolCalls,
            finishReason: fixture.expected!.finishReason,
            finished: fixture.expected!.finished,
          });
          expect(decoder.usage()).toMatchObject(fixture.expected!.usage);
        });
      }
    }
  });
}

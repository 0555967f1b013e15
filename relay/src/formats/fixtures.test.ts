/**
 * Every recorded fixture of the Anthropic and Gemini adapters (`<provider>/__fixtures__/<feature>.json`): the
 * client's chat request converts to the upstream request the provider documents, the upstream answer (or stream,
 * or error) converts to the chat answer a client expects, and the usage is billed as the provider counts it.
 * Each fixture names the page it was written from (`reference`) and where its upstream side came from: a `source`
 * URL, or its place on the list of fixtures written by us (testing/fixture-provenance.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultOptionValue } from '@turnpike/core/options/registry';
import { describe, expect, it } from 'vitest';
import { hasUsage } from '../metering/usage.ts';
import { providers } from '../providers/registry.ts';
import { createChunkCollector } from '../testing/chat-chunks.ts';
import { provenanceProblem } from '../testing/fixture-provenance.ts';
import { isRecord, type Json } from './canonical.ts';
import type { FormatOptions } from './format.ts';

const options: FormatOptions = { get: (key) => defaultOptionValue(key) };

interface Fixture {
  readonly source?: string;
  readonly chatRequest?: Json;
  readonly upstreamRequest?: Json;
  readonly upstreamRequestAbsent?: string[];
  readonly upstreamAnswer?: Json;
  readonly chatAnswer?: Json;
  readonly usage?: Json;
  readonly upstreamStream?: { event?: string; data: Json }[];
  readonly expected?: {
    content: string;
    reasoning: string;
    toolCalls: { id?: string; name: string; arguments: string }[];
    finishReason: string;
    finished: boolean;
  };
  readonly upstreamError?: { status: number; body: Json };
  readonly expectedError?: Json;
  readonly expectedStreamError?: Json;
}

const fixtureProviders = ['anthropic', 'gemini'] as const;

for (const provider of fixtureProviders) {
  const dir = path.join(import.meta.dirname, provider, '__fixtures__');
  const adapter = providers[provider]?.format;
  const upstream = providers[provider];
  if (!adapter || !upstream) throw new Error(`no provider ${provider}`);
  describe(`${provider} fixtures`, () => {
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
      const fixture = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Fixture;
      it(`${file}: names where its upstream side came from`, () => {
        expect(provenanceProblem(`formats/${provider}/__fixtures__/${file}`, { ...fixture })).toBeUndefined();
      });
      if (fixture.chatRequest && fixture.upstreamRequest) {
        it(`${file}: converts the chat request to the provider's`, async () => {
          const request = fixture.chatRequest as Json;
          const call = await upstream.buildRequest(
            {
              id: 1,
              other: '',
              type: provider === 'anthropic' ? 14 : 24,
              key: 'sk-test',
              baseUrl: 'http://upstream',
              headers: {},
              organization: undefined,
              paramOverride: undefined,
            },
            {
              endpoint: 'chat',
              payload: { kind: 'json', body: request },
              upstreamModel: String(request.model),
              isStream: false,
              options,
            },
          );
          const body = JSON.parse(call.body as string) as Json;
          expect(body).toMatchObject(fixture.upstreamRequest as Json);
          for (const field of fixture.upstreamRequestAbsent ?? []) expect(body).not.toHaveProperty(field);
        });
      }
      if (fixture.upstreamAnswer && fixture.chatAnswer) {
        it(`${file}: converts the provider's answer to a chat answer with its usage`, () => {
          const { answer, usage } = adapter.answerToChat(fixture.upstreamAnswer as Json, 'model');
          expect(answer).toMatchObject(fixture.chatAnswer as Json);
          expect(usage).toMatchObject(fixture.usage as Json);
          expect(adapter.usageOf(fixture.upstreamAnswer as Json)).toMatchObject(fixture.usage as Json);
        });
      }
      if (fixture.upstreamStream && fixture.expected) {
        it(`${file}: reads the provider's stream as chat chunks`, () => {
          const decoder = adapter.streamToChat('model');
          const collector = createChunkCollector();
          let finished = false;
          for (const { event, data } of fixture.upstreamStream ?? []) {
            const decoded = decoder.push({
              event,
              data: JSON.stringify(data),
              id: undefined,
              retry: undefined,
            });
            finished ||= decoded.finished === true;
            for (const chunk of decoded.chunks) collector.push(chunk);
          }
          const { toolCalls, ...seen } = collector.seen();
          const expected = fixture.expected as NonNullable<Fixture['expected']>;
          expect({ ...seen, finished }).toEqual({
            content: expected.content,
            reasoning: expected.reasoning,
            finishReason: expected.finishReason,
            finished: expected.finished,
          });
          expect(toolCalls).toMatchObject(expected.toolCalls);
          expect(decoder.usage()).toMatchObject(fixture.usage as Json);
        });
      }
      if (fixture.upstreamError) {
        it(`${file}: reads the provider's error answer`, () => {
          const { status, body } = fixture.upstreamError as NonNullable<Fixture['upstreamError']>;
          expect(adapter.readError(status, JSON.stringify(body))).toMatchObject(
            fixture.expectedError as Json,
          );
        });
      }
      if (fixture.upstreamStream && fixture.expectedStreamError) {
        it(`${file}: ends a stream at the provider's error event`, () => {
          const decoder = adapter.streamToChat('model');
          let error: unknown;
          for (const { event, data } of fixture.upstreamStream ?? []) {
            const decoded = decoder.push({
              event,
              data: JSON.stringify(data),
              id: undefined,
              retry: undefined,
            });
            if (decoded.error) error = decoded.error;
          }
          expect(isRecord(error) && error).toMatchObject(fixture.expectedStreamError as Json);
          expect(hasUsage(decoder.usage()) || provider === 'gemini').toBe(true);
        });
      }
    }
  });
}

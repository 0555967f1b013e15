/**
 * The channel test (reference §4.8): one small request to a channel, built the way the relay would send it
 * (adapter URL and headers, model mapping, `param_override`), answered with the outcome, the time it took and
 * the usage to price. What to do with the outcome (store the time, log, disable, re-enable) is the caller's
 * business: the console API's channel-test service.
 */

import type { IncomingHttpHeaders } from 'node:http';
import { isRecord, type Json } from '@turnpike/core/json';
import { ProviderTypeId, refusalOfType } from '@turnpike/core/providers/catalogue';
import type { Endpoint, NormalisedUsage, RelayError } from '../contract.ts';
import type { FormatOptions } from '../formats/format.ts';
import {
  countChatPromptTokens,
  countInputTokens,
  countTextTokens,
  encodingForModel,
} from '../metering/tokens.ts';
import { EMPTY_USAGE, hasUsage, normaliseOpenAiUsage } from '../metering/usage.ts';
import { CredentialError } from '../providers/provider.ts';
import { providerFor } from '../providers/registry.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { toUpstreamFailure, type UpstreamClient } from '../upstream/client.ts';
import { redactorOf } from '../upstream/redact.ts';

/** The model a test uses when neither the request, the channel's test model nor its model list names one. */
export const FALLBACK_TEST_MODEL = 'gpt-4o-mini';

/** Bounds the whole test; a channel slower than this fails it. */
export const DEFAULT_TEST_TIMEOUT_MS = 60_000;

const ANSWER_LIMIT = 1024 * 1024;

/** Test model: the one asked for > the channel's `test_model` > its first model > {@link FALLBACK_TEST_MODEL}. */
export function chooseTestModel(
  channel: { readonly testModel: string | null; readonly models: string },
  requested?: string,
): string {
  const asked = requested?.trim();
  if (asked) return asked;
  const configured = channel.testModel?.trim();
  if (configured) return configured;
  const first = channel.models
    .split(',')
    .map((m) => m.trim())
    .find((m) => m !== '');
  return first ?? FALLBACK_TEST_MODEL;
}

/** Embedding models are tested on `/v1/embeddings` (names as the reference recognises them, or an M3E channel). */
export function isEmbeddingModel(model: string, channelType: number): boolean {
  if (channelType === ProviderTypeId.MokaAi) return true;
  const name = model.toLowerCase();
  return (
    name.includes('embedding') || name.includes('embed') || name.includes('bge-') || name.startsWith('m3e')
  );
}

/**
 * The completion limit of a test chat: `max_tokens` 10, except reasoning models (o1/o3/o4, gpt-5) that only
 * accept `max_completion_tokens`, "thinking" models other than Claude (50, they think first) and Gemini (300,
 * its thinking counts against the limit).
 */
export function testTokenLimit(model: string): Json {
  const name = model.toLowerCase();
  if (/^(o1|o3|o4|gpt-5)/.test(name)) return { max_completion_tokens: 10 };
  if (name.includes('thinking') && !name.includes('claude')) return { max_tokens: 50 };
  if (name.includes('gemini')) return { max_tokens: 300 };
  return { max_tokens: 10 };
}

/** Why a channel type cannot be tested, or undefined when it can. */
export function untestableReason(channelType: number): string | undefined {
  if (channelType === ProviderTypeId.MidjourneyProxy || channelType === ProviderTypeId.MidjourneyProxyPlus) {
    return 'Midjourney channels cannot be tested: they serve drawing tasks, not chat';
  }
  if (channelType === ProviderTypeId.Suno)
    return 'Suno channels cannot be tested: they serve music tasks, not chat';
  if (!providerFor(channelType))
    return `channels of this type cannot be tested yet: ${refusalOfType(channelType) ?? 'the relay has no provider for it'}`;
  return undefined;
}

export interface TestRequest {
  readonly endpoint: Extract<Endpoint, 'chat' | 'embeddings'>;
  /** The model named by the test (billing and the log use it). */
  readonly model: string;
  /** The model sent upstream, after the channel's model mapping. */
  readonly upstreamModel: string;
  readonly body: Json;
}

/**
 * The request a test sends: non-stream, one "hi", a tiny completion limit. The adapter then does what it does for
 * every relayed request (mapped model, `param_override` on top).
 */
export function buildTestRequest(channel: RelayChannel, model: string): TestRequest {
  const upstreamModel = channel.modelMapping[model] ?? model;
  const endpoint: TestRequest['endpoint'] = isEmbeddingModel(upstreamModel, channel.type)
    ? 'embeddings'
    : 'chat';
  const body: Json =
    endpoint === 'embeddings'
      ? { model: upstreamModel, input: ['hi'] }
      : {
          model: upstreamModel,
          messages: [{ role: 'user', content: 'hi' }],
          stream: false,
          ...testTokenLimit(upstreamModel),
        };
  return { endpoint, model, upstreamModel, body };
}

export type ChannelTestResult =
  | {
      readonly ok: true;
      readonly request: TestRequest;
      readonly elapsedMs: number;
      readonly usage: NormalisedUsage;
    }
  | {
      readonly ok: false;
      readonly request: TestRequest | undefined;
      readonly elapsedMs: number;
      readonly error: RelayError;
    };

const failure = (status: number, message: string, code: string, isLocal = false): RelayError => ({
  status,
  message,
  type: isLocal ? 'new_api_error' : 'upstream_error',
  code,
  param: null,
  isLocal,
});

/** Sends the test request and reads the whole answer; never throws for an upstream problem. */
export async function runChannelTest(
  upstream: UpstreamClient,
  channel: RelayChannel,
  model: string,
  options: { timeoutMs?: number; signal?: AbortSignal; settings: FormatOptions },
): Promise<ChannelTestResult> {
  const untestable = untestableReason(channel.type);
  if (untestable)
    return {
      ok: false,
      request: undefined,
      elapsedMs: 0,
      error: failure(400, untestable, 'untestable', true),
    };
  if (channel.key === undefined) {
    const message = 'the stored key of this channel cannot be read; enter the key again';
    return {
      ok: false,
      request: undefined,
      elapsedMs: 0,
      error: failure(400, message, 'unreadable_key', true),
    };
  }
  const request = buildTestRequest(channel, model);
  const provider = providerFor(channel.type, request.upstreamModel);
  if (!provider?.supports(request.endpoint)) {
    const message = `channels of this type cannot be tested on ${request.endpoint}`;
    return { ok: false, request, elapsedMs: 0, error: failure(400, message, 'untestable', true) };
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;

  let status: number;
  let headers: IncomingHttpHeaders;
  let text: string;
  try {
    const call = await provider.buildRequest(channel, {
      endpoint: request.endpoint,
      payload: { kind: 'json', body: request.body },
      upstreamModel: request.upstreamModel,
      isStream: false,
      options: options.settings,
    });
    const answered = await upstream.request({
      url: call.url,
      headers: call.headers,
      body: call.body,
      proxy: channel.proxy,
      signal,
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
    });
    // A provider that reports errors inside a 200 (Wenxin) says which status the answer stands for.
    const response =
      answered.status === 200 && provider.checkAnswer ? await provider.checkAnswer(answered) : answered;
    status = response.status;
    headers = response.headers;
    text = await response.readText(ANSWER_LIMIT);
  } catch (error) {
    if (error instanceof CredentialError)
      return {
        ok: false,
        request,
        elapsedMs: elapsed(),
        error: { ...error.error, message: redactorOf(channel).redact(error.message) },
      };
    const upstreamFailure = toUpstreamFailure(error);
    const timedOut = upstreamFailure.kind === 'timeout' || deadline.aborted;
    const message = timedOut
      ? `the upstream did not answer within ${timeoutMs / 1000} s`
      : upstreamFailure.message;
    return {
      ok: false,
      request,
      elapsedMs: elapsed(),
      error: failure(timedOut ? 504 : 502, message, 'do_request_failed'),
    };
  }
  const elapsedMs = elapsed();
  const redactor = redactorOf(channel);
  const readError = (code: number): RelayError => {
    const error = provider.readError(code, text, headers);
    return { ...error, message: redactor.redact(error.message) };
  };
  if (status !== 200) return { ok: false, request, elapsedMs, error: readError(status) };

  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // An upstream of another format answers in its own; a chat test reads it as a chat answer.
  const answer =
    isRecord(parsed) &&
    provider.format.id !== 'openai' &&
    request.endpoint === 'chat' &&
    parsed.error === undefined
      ? provider.format.answerToChat(parsed, request.upstreamModel).answer
      : parsed;
  if (!isRecord(answer))
    return {
      ok: false,
      request,
      elapsedMs,
      error: failure(502, 'the upstream answer is not JSON', 'bad_response_body'),
    };
  if (answer.error !== undefined && answer.error !== null)
    return { ok: false, request, elapsedMs, error: readError(200) };
  const list = request.endpoint === 'chat' ? answer.choices : answer.data;
  if (!Array.isArray(list)) {
    const field = request.endpoint === 'chat' ? 'choices' : 'data';
    return {
      ok: false,
      request,
      elapsedMs,
      error: failure(502, `the upstream answer has no ${field}`, 'bad_response_body'),
    };
  }
  return { ok: true, request, elapsedMs, usage: usageOf(request, answer) };
}

/** The upstream's usage, or our own count when it reported none. */
function usageOf(request: TestRequest, answer: Json): NormalisedUsage {
  const reported = normaliseOpenAiUsage(answer.usage);
  if (hasUsage(reported)) return reported;
  if (request.endpoint === 'embeddings') {
    return {
      ...EMPTY_USAGE,
      promptTokens: countInputTokens(request.model, request.body.input),
      source: 'counted',
    };
  }
  const reply = (Array.isArray(answer.choices) ? answer.choices : [])
    .map((choice) => (isRecord(choice) && isRecord(choice.message) ? choice.message.content : undefined))
    .filter((content): content is string => typeof content === 'string')
    .join('');
  return {
    ...EMPTY_USAGE,
    promptTokens: countChatPromptTokens(request.model, request.body.messages as never[], []),
    completionTokens: countTextTokens(reply, encodingForModel(request.model)),
    source: 'counted',
  };
}

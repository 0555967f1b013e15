/**
 * Baidu Wenxin's first API (https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11): the key `APIKey|SecretKey`
 * is exchanged at `<base>/oauth/2.0/token` (`grant_type=client_credentials`) for an access token valid for 30
 * days, cached until a day before it expires, one exchange per key at a time; chat at
 * `<base>/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/<endpoint>?access_token=…` in Wenxin's own shape (the system
 * prompt apart, `max_output_tokens`, the answer's `result` and OpenAI-style `usage`; stream events with
 * `result` pieces and `is_end`), reached through the canonical chat shape. The endpoint of a model is Baidu's
 * (`ERNIE-4.0-8K` → `completions_pro`, `ERNIE-3.5-8K` → `completions`, others by their lower-case name).
 */

import type { ChannelView, NormalisedUsage } from '../../contract.ts';
import {
  asNumber,
  asString,
  type ChatAnswer,
  chatChunk,
  chatCompletion,
  contentText,
  isRecord,
  type Json,
  nowSeconds,
} from '../../formats/canonical.ts';
import type { DecodedEvent, Format, StreamDecoder } from '../../formats/format.ts';
import { normaliseOpenAiUsage } from '../../metering/usage.ts';
import { eventRecord, type SseEvent } from '../../sse.ts';
import { answerWithStatus, baseUrlOf, callOf, credentialFailure, type Provider } from '../provider.ts';

const ENDPOINTS: Readonly<Record<string, string>> = {
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-Bot': 'completions',
  'ERNIE-Bot-turbo': 'eb-instant',
};

export const wenxinEndpointOf = (model: string): string => ENDPOINTS[model] ?? model.toLowerCase();

/** A canonical chat request in Wenxin's shape. */
export function chatToWenxin(chat: Readonly<Json>, isStream: boolean): Json {
  const system: string[] = [];
  const messages: Json[] = [];
  for (const message of (Array.isArray(chat.messages) ? chat.messages : []).filter(isRecord)) {
    const text = contentText(message.content);
    if (message.role === 'system' || message.role === 'developer') system.push(text);
    else messages.push({ role: message.role === 'assistant' ? 'assistant' : 'user', content: text });
  }
  const body: Json = { messages, stream: isStream };
  if (system.length > 0) body.system = system.join('\n');
  if (asNumber(chat.temperature) !== undefined) body.temperature = chat.temperature;
  if (asNumber(chat.top_p) !== undefined) body.top_p = chat.top_p;
  const maxTokens = asNumber(chat.max_completion_tokens) ?? asNumber(chat.max_tokens);
  if (maxTokens !== undefined) body.max_output_tokens = maxTokens;
  if (typeof chat.user === 'string') body.user_id = chat.user;
  return body;
}

/**
 * Wenxin's error codes (https://cloud.baidu.com/doc/WENXINWORKSHOP/s/tlmyncueh) as the HTTP status they stand for:
 * an access token that is invalid or expired (110, 111) or a key without the service (6, 13-15) is the channel's
 * credential; quota and rate limits (4, 17-19, 336501, 336502) a busy channel; a request Wenxin cannot take
 * (3, 336001-336007 and the other 336xxx) the caller's; an internal error (1, 2, 336000, 336100) the upstream's.
 */
function wenxinStatusOf(code: number): number {
  if (code === 110 || code === 111 || code === 13 || code === 14 || code === 15) return 401;
  if (code === 6) return 403;
  if ([4, 17, 18, 19, 336501, 336502].includes(code)) return 429;
  if (code === 1 || code === 336000 || code === 336100) return 500;
  if (code === 2) return 503;
  return 400;
}

const TYPE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  429: 'rate_limit_error',
};

function wenxinError(payload: Json): { status: number; message: string } | undefined {
  if (payload.error_code === undefined) return undefined;
  const code = asNumber(payload.error_code) ?? 0;
  return {
    status: wenxinStatusOf(code),
    message: `${code}: ${asString(payload.error_msg) ?? 'Wenxin error'}`,
  };
}

export function wenxinToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  const usage = normaliseOpenAiUsage(answer.usage);
  return {
    answer: {
      ...chatCompletion(
        asString(answer.id) ?? `chatcmpl-wenxin-${nowSeconds()}`,
        model,
        { role: 'assistant', content: asString(answer.result) ?? '' },
        answer.finish_reason === 'length' ? 'length' : 'stop',
        isRecord(answer.usage) ? answer.usage : undefined,
      ),
      created: asNumber(answer.created) ?? nowSeconds(),
    },
    usage,
  };
}

export function createWenxinDecoder(model: string): StreamDecoder {
  let id = `chatcmpl-wenxin-${nowSeconds()}`;
  const created = nowSeconds();
  let usage: NormalisedUsage | undefined;
  let started = false;
  return {
    usage: () => usage,
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return { chunks: [] };
      const failed = wenxinError(payload);
      if (failed)
        return {
          chunks: [],
          error: {
            ...failed,
            type: TYPE_OF_STATUS[failed.status] ?? 'upstream_error',
            code: null,
            param: null,
            isLocal: false,
          },
        };
      id = asString(payload.id) ?? id;
      usage = normaliseOpenAiUsage(payload.usage) ?? usage;
      const chunk = (delta: Json, finish: string | null = null) =>
        chatChunk(id, model, created, delta, finish);
      const chunks: Json[] = [];
      if (!started) {
        started = true;
        chunks.push(chunk({ role: 'assistant', content: '' }));
      }
      const text = asString(payload.result) ?? '';
      if (text) chunks.push(chunk({ content: text }));
      if (payload.is_end === true) {
        chunks.push(chunk({}, payload.finish_reason === 'length' ? 'length' : 'stop'));
        return { chunks, finished: true };
      }
      return { chunks };
    },
  };
}

export const wenxinFormat: Format = {
  id: 'wenxin',
  supports: (endpoint) => endpoint === 'chat',
  writeRequest(channel, input) {
    const json = input.payload.kind === 'json' ? chatToWenxin(input.payload.body, input.isStream) : {};
    if (channel.paramOverride) Object.assign(json, channel.paramOverride);
    const path = `/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/${encodeURIComponent(wenxinEndpointOf(input.upstreamModel))}`;
    return { path, model: input.upstreamModel, headers: {}, body: { kind: 'json', json } };
  },
  readError(status, body) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const failed = isRecord(parsed) ? wenxinError(parsed) : undefined;
    const errorStatus = failed?.status ?? status;
    return {
      status: errorStatus,
      message: failed?.message ?? `upstream answered ${status}`,
      type: TYPE_OF_STATUS[errorStatus] ?? 'upstream_error',
      code: null,
      param: null,
      isLocal: false,
    };
  },
  retriesBadRequest: false,
  usageOf: (answer) => normaliseOpenAiUsage(answer.usage),
  answerToChat: wenxinToChat,
  streamToChat: createWenxinDecoder,
};

const RENEW_BEFORE_MS = 24 * 3600_000;
const tokens = new Map<string, { token: string; renewAt: number }>();
const inFlight = new Map<string, Promise<string>>();

async function exchange(base: string, apiKey: string, secretKey: string, id: string): Promise<string> {
  const query = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: apiKey,
    client_secret: secretKey,
  });
  let status = 0;
  let body: Json = {};
  try {
    const response = await fetch(`${base}/oauth/2.0/token?${query}`, {
      method: 'POST',
      signal: AbortSignal.timeout(30_000),
    });
    status = response.status;
    body = (await response.json()) as Json;
  } catch {
    throw credentialFailure('the Baidu token exchange could not reach its endpoint', 502);
  }
  if (typeof body.access_token !== 'string')
    throw credentialFailure(
      `the Baidu token exchange failed: ${asString(body.error_description) ?? `status ${status}`}`,
      status >= 500 ? 502 : 401,
    );
  const seconds = asNumber(body.expires_in) ?? 2_592_000;
  if (tokens.size > 1000) tokens.clear();
  tokens.set(id, { token: body.access_token, renewAt: Date.now() + seconds * 1000 - RENEW_BEFORE_MS });
  return body.access_token;
}

function accessTokenOf(channel: ChannelView, base: string): Promise<string> {
  const [apiKey, secretKey] = (channel.key ?? '').split('|').map((part) => part.trim());
  if (!apiKey || !secretKey) throw credentialFailure('the Baidu key must be APIKey|SecretKey');
  const id = `${base}\n${apiKey}\n${secretKey}`;
  const cached = tokens.get(id);
  if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.token);
  let pending = inFlight.get(id);
  if (!pending) {
    pending = exchange(base, apiKey, secretKey, id).finally(() => inFlight.delete(id));
    inFlight.set(id, pending);
  }
  return pending;
}

export const baiduProvider: Provider = {
  id: 'baidu',
  format: wenxinFormat,
  genAiName: 'baidu.wenxin',
  supports: (endpoint) => endpoint === 'chat',
  retriesBadRequest: false,
  async buildRequest(channel, input) {
    const base = baseUrlOf(channel);
    const token = await accessTokenOf(channel, base);
    const written = wenxinFormat.writeRequest(channel, input);
    return callOf(written, `${base}${written.path}?access_token=${encodeURIComponent(token)}`, {}, channel);
  },
  readError: (status, body) => wenxinFormat.readError(status, body),
  // Wenxin answers most errors with a 200 whose body holds `error_code`: read as the status it stands for.
  checkAnswer: (response) =>
    answerWithStatus(response, (answer) => (isRecord(answer) ? wenxinError(answer)?.status : undefined)),
};

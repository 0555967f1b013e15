/**
 * iFlytek Spark's HTTP API (https://www.xfyun.cn/doc/spark/HTTP%E8%B0%83%E7%94%A8%E6%96%87%E6%A1%A3.html and
 * the X1 HTTP document): OpenAI's chat completions at `<base>/v1/chat/completions` (`/v2/chat/completions` for
 * the X1 reasoning models), the APIPassword (or `APIKey:APISecret`) as a bearer token; models `lite`,
 * `generalv3`, `pro-128k`, `generalv3.5`, `max-32k`, `4.0Ultra`, `x1`. The WebSocket API's `APPID|APISecret|APIKey`
 * key is refused with the catalogue's reason (`refusalOfKey`), which the console API and the operator give too.
 * The model names the WebSocket era used (`SparkDesk-v3.5`) are sent as their HTTP names. Spark reports some
 * errors as `{ code, message, sid }`, inside a 200 as well: read by their code (see {@link sparkStatusOf}); in a
 * stream such an event becomes OpenAI's in-band `{ error }` chunk, which ends the stream with that error.
 */

import { refusalOfKey } from '@turnpike/core/providers/catalogue';
import type { RelayError } from '../../contract.ts';
import { openAiFormat } from '../../formats/openai/format.ts';
import type { UpstreamBody } from '../../upstream/client.ts';
import { answerWithStatus, baseUrlOf, callOf, credentialFailure, type Provider } from '../provider.ts';

/** The WebSocket era's model names (new-api's `SparkDesk-v…`) → the HTTP API's. */
const HTTP_MODEL_OF: Readonly<Record<string, string>> = {
  'SparkDesk-v1.1': 'lite',
  'SparkDesk-v3.1': 'generalv3',
  'SparkDesk-v3.1-128K': 'pro-128k',
  'SparkDesk-v3.5': 'generalv3.5',
  'SparkDesk-v3.5-32K': 'max-32k',
  'SparkDesk-v4.0': '4.0Ultra',
};

/** The HTTP API's name of a model. */
export const sparkModelOf = (model: string): string => HTTP_MODEL_OF[model] ?? model;

/**
 * Spark's error codes (the HTTP document's error table) as the status they stand for: the app without the service
 * or its key refused (11200, 10007) the channel's credential; daily, per-second and concurrency limits (11201-11203)
 * a busy channel; moderation and parameter errors (10013, 10014, 10019, 10163, 10907) the caller's; the rest the
 * upstream's.
 */
export function sparkStatusOf(code: number): number {
  if (code === 11200 || code === 10007) return 401;
  if (code === 11201 || code === 11202 || code === 11203) return 429;
  if ([10013, 10014, 10019, 10163, 10907].includes(code)) return 400;
  return 502;
}

const TYPE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  429: 'rate_limit_error',
};

/** Spark's own `{ code, message }`, when the answer is one with a code that is not 0. */
function sparkFailure(answer: unknown): { code: number; message: string } | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { code, message } = answer as Record<string, unknown>;
  if (typeof code !== 'number' || code === 0) return undefined;
  return { code, message: typeof message === 'string' ? message : 'Spark error' };
}

function readSparkError(status: number, body: string): RelayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const failure = sparkFailure(parsed);
  if (!failure) return openAiFormat.readError(status, body);
  const mapped = sparkStatusOf(failure.code);
  return {
    status: mapped,
    message: `${failure.code}: ${failure.message}`,
    type: TYPE_OF_STATUS[mapped] ?? 'upstream_error',
    code: String(failure.code),
    param: null,
    isLocal: false,
  };
}

/** One `data:` line of Spark's stream, or its in-band error rewritten as OpenAI's `{ error }` chunk. */
function sparkLine(line: string): string {
  // Every answer chunk says `"code":0`; only another code is read.
  if (!line.startsWith('data:') || !line.includes('"code"') || /"code":\s*0\s*[,}]/.test(line)) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.slice(5));
  } catch {
    return line;
  }
  const failure = sparkFailure(parsed);
  if (!failure) return line;
  const status = sparkStatusOf(failure.code);
  const error = {
    message: `${failure.code}: ${failure.message}`,
    type: TYPE_OF_STATUS[status] ?? 'upstream_error',
    code: String(failure.code),
  };
  return `data: ${JSON.stringify({ error })}`;
}

/** Spark's SSE with its in-band errors in OpenAI's shape; every other byte as it came, line by line. */
function sparkStream(body: UpstreamBody): UpstreamBody {
  let partial = '';
  const decoder = new TextDecoder();
  async function* reframe(): AsyncGenerator<Uint8Array> {
    for await (const piece of body) {
      const text = partial + decoder.decode(piece, { stream: true });
      const cut = text.lastIndexOf('\n');
      if (cut < 0) {
        partial = text;
        continue;
      }
      partial = text.slice(cut + 1);
      yield Buffer.from(
        text
          .slice(0, cut + 1)
          .split('\n')
          .map(sparkLine)
          .join('\n'),
      );
    }
    const rest = partial + decoder.decode();
    partial = '';
    if (rest !== '') yield Buffer.from(sparkLine(rest));
  }
  const iterator = reframe();
  return {
    [Symbol.asyncIterator]: () => iterator,
    get ended() {
      return body.ended && partial === '';
    },
  };
}

export const sparkProvider: Provider = {
  id: 'spark',
  format: openAiFormat,
  genAiName: 'iflytek.spark',
  supports: (endpoint) => endpoint === 'chat',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const key = channel.key ?? '';
    const refusal = refusalOfKey(channel.type, key);
    if (refusal) throw credentialFailure(refusal);
    const model = sparkModelOf(input.upstreamModel);
    const written = openAiFormat.writeRequest(channel, { ...input, upstreamModel: model });
    const version = /^x1/i.test(model) ? 'v2' : 'v1';
    return callOf(
      written,
      `${baseUrlOf(channel)}/${version}/chat/completions`,
      { authorization: `Bearer ${key}` },
      channel,
    );
  },
  readError: readSparkError,
  reframeStream: sparkStream,
  checkAnswer: (response) =>
    answerWithStatus(response, (answer) => {
      const failure = sparkFailure(answer);
      return failure && sparkStatusOf(failure.code);
    }),
};

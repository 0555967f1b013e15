/**
 * iFlytek Spark's HTTP API (https://www.xfyun.cn/doc/spark/HTTP%E8%B0%83%E7%94%A8%E6%96%87%E6%A1%A3.html and
 * the X1 HTTP document): OpenAI's chat completions at `<base>/v1/chat/completions` (`/v2/chat/completions` for
 * the X1 reasoning models), the APIPassword (or `APIKey:APISecret`) as a bearer token; models `lite`,
 * `generalv3`, `pro-128k`, `generalv3.5`, `max-32k`, `4.0Ultra`, `x1`. The WebSocket API's `APPID|APISecret|APIKey`
 * key is refused with the catalogue's reason (`refusalOfKey`), which the console API and the operator give too.
 * The model names the WebSocket era used (`SparkDesk-v3.5`) are sent as their HTTP names.
 */
import { refusalOfKey } from '@turnpike/core/providers/catalogue';
import { openAiFormat } from '../../formats/openai/format.ts';
import { baseUrlOf, callOf, credentialFailure, type Provider } from '../provider.ts';

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
  readError: (status, body) => openAiFormat.readError(status, body),
};

/**
 * Jimeng video on Volcengine's visual API (Jimeng 3.0 text-to-video and first-frame image-to-video,
 * https://www.volcengine.com/docs/85621/1792702 and /1792711), channel type 51, behind the OpenAI video API clients
 * call. Every call is `POST <base>/?Action=<action>&Version=2022-08-31`, signed with the channel's
 * `<AccessKeyID>|<SecretAccessKey>` by Volcengine's HMAC-SHA256 signature (https://www.volcengine.com/docs/6369/67269:
 * region `cn-north-1`, service `cv`, headers `X-Date` and `X-Content-Sha256` signed with `Host` and `Content-Type`).
 * - `CVSync2AsyncSubmitTask` `{ req_key, prompt, seed, frames: 121 | 241, aspect_ratio }` (text) or `{ req_key,
 *   prompt, seed, frames, image_urls | binary_data_base64 }` (first frame) answers `{ code: 10000, data: { task_id } }`.
 * - `CVSync2AsyncGetResult` `{ req_key, task_id }` answers `{ code: 10000, data: { status, video_url } }`, `status`
 *   one of `in_queue`, `generating`, `done`, `not_found`, `expired`.
 * Any other `code` is the API's refusal, with its `message`. The clip is a public address, fetched without
 * credentials. Jimeng reports no length: a clip stays charged at the length asked (121 frames at 24 fps is 5 s).
 */
import { createHash, createHmac } from 'node:crypto';
import { isRecord } from '@turnpike/core/json';
import type { Dispatcher } from 'undici';
import { baseUrlOf } from '../../providers/provider.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import {
  aspectRatioOf,
  callJson,
  type NativeJob,
  type NativeSubmitAnswer,
  type NativeVideoApi,
  parseJson,
  refusedAnswer,
} from './native.ts';
import type { UpstreamVideo } from './wire.ts';

const VERSION = '2022-08-31';
const REGION = 'cn-north-1';
const SERVICE = 'cv';
const SUCCESS = 10000;
/** Codes of a busy or failing API (QPS and concurrency limits, internal errors): asked again, never a failure. */
const TRANSIENT_CODES = new Set([50429, 50430, 50500, 50501]);

/** The key pair of `<AccessKeyID>|<SecretAccessKey>`; undefined for any other key. */
export function jimengKeyPair(key: string): { access: string; secret: string } | undefined {
  const [access, secret, ...rest] = key.split('|').map((part) => part.trim());
  return access && secret && rest.length === 0 ? { access, secret } : undefined;
}

const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
const hmac = (key: string | Buffer, value: string): Buffer =>
  createHmac('sha256', key).update(value).digest();
/** RFC 3986 encoding, as the canonical query wants it. */
const encode = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The headers that sign one call: `X-Date`, `X-Content-Sha256`, `Content-Type`, `Host` and the `Authorization`
 * `HMAC-SHA256 Credential=<AK>/<date>/cn-north-1/cv/request, SignedHeaders=…, Signature=…`.
 */
export function signVolcengine(input: {
  url: URL;
  body: string;
  access: string;
  secret: string;
  now: Date;
}): Record<string, string> {
  const xDate = input.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const date = xDate.slice(0, 8);
  const payloadHash = sha256Hex(input.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    host: input.url.host,
    'x-content-sha256': payloadHash,
    'x-date': xDate,
  };
  const signed = Object.keys(headers).sort();
  const query = [...input.url.searchParams.entries()]
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonical = [
    'POST',
    input.url.pathname || '/',
    query,
    signed.map((name) => `${name}:${headers[name]}\n`).join(''),
    signed.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${date}/${REGION}/${SERVICE}/request`;
  const toSign = ['HMAC-SHA256', xDate, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(input.secret, date), REGION), SERVICE), 'request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    ...headers,
    authorization: `HMAC-SHA256 Credential=${input.access}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`,
  };
}

/**
 * The `req_key` and body of a job. The model names the text-to-video `req_key` (`jimeng_t2v_v30`,
 * `jimeng_t2v_v30_1080p`); with a first frame it becomes the first-frame key of the same tier
 * (`jimeng_i2v_first_v30`, `jimeng_i2v_first_v30_1080`), any other model is sent as its own `req_key`.
 */
export function jimengRequestOf(job: NativeJob): { reqKey: string; body: Record<string, unknown> } {
  let reqKey = job.model;
  const base: Record<string, unknown> = {
    prompt: job.prompt,
    seed: -1,
    frames: job.seconds === 10 ? 241 : 121,
  };
  if (!job.image)
    return { reqKey, body: { req_key: reqKey, ...base, aspect_ratio: aspectRatioOf(job.size) } };
  if (reqKey === 'jimeng_t2v_v30') reqKey = 'jimeng_i2v_first_v30';
  else if (reqKey === 'jimeng_t2v_v30_1080p') reqKey = 'jimeng_i2v_first_v30_1080';
  const inline = /^data:image\/[\w.+-]+;base64,(.+)$/s.exec(job.image);
  return {
    reqKey,
    body: {
      req_key: reqKey,
      ...base,
      ...(inline ? { binary_data_base64: [inline[1]] } : { image_urls: [job.image] }),
    },
  };
}

/** An upstream id the gateway keeps: `<req_key>/<task_id>`, since the result is asked with both. */
export const isJimengId = (id: unknown): id is string =>
  typeof id === 'string' && /^jimeng_[a-z0-9_]{1,60}\/[\w-]{1,128}$/.test(id);

/** A `CVSync2AsyncGetResult` answer read as an OpenAI video job; undefined when it is no answer at all. */
export function videoOfJimengResult(
  id: string,
  answer: unknown,
): (UpstreamVideo & { content_uri?: string }) | undefined {
  if (!isRecord(answer) || typeof answer.code !== 'number') return undefined;
  if (answer.code !== SUCCESS) {
    if (TRANSIENT_CODES.has(answer.code)) return undefined;
    const message =
      typeof answer.message === 'string' && answer.message !== '' ? answer.message : 'the task failed';
    return { id, status: 'failed', error: { code: String(answer.code), message } };
  }
  const data = isRecord(answer.data) ? answer.data : {};
  switch (data.status) {
    case 'in_queue':
      return { id, status: 'queued' };
    case 'generating':
      return { id, status: 'in_progress' };
    case 'done':
      return typeof data.video_url === 'string' && /^https?:\/\//.test(data.video_url)
        ? { id, status: 'completed', progress: 100, content_uri: data.video_url }
        : { id, status: 'failed', error: { code: 'no_video', message: 'the task finished without a video' } };
    case 'not_found':
    case 'expired':
      return {
        id,
        status: 'failed',
        error: { code: data.status, message: `the Jimeng task is ${data.status}` },
      };
    default:
      return undefined;
  }
}

async function call(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  action: string,
  json: unknown,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const pair = jimengKeyPair(channel.key ?? '');
  if (!pair) throw new Error(`channel ${channel.id}'s key is not "<AccessKeyID>|<SecretAccessKey>"`);
  const url = new URL(`${baseUrlOf(channel)}/`);
  url.searchParams.set('Action', action);
  url.searchParams.set('Version', VERSION);
  const body = JSON.stringify(json);
  const signature = signVolcengine({ url, body, ...pair, now: new Date() });
  // The channel's extra headers go first: they can never replace the signature.
  return callJson(dispatcher, url.toString(), {
    method: 'POST',
    headers: { ...channel.headers, ...signature },
    body,
    timeoutMs,
  });
}

async function submit(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  job: NativeJob,
  timeoutMs: number,
): Promise<NativeSubmitAnswer> {
  const { reqKey, body } = jimengRequestOf(job);
  const answer = await call(channel, dispatcher, 'CVSync2AsyncSubmitTask', body, timeoutMs);
  const said = parseJson(answer.text) as { code?: unknown; message?: unknown; data?: { task_id?: unknown } };
  const taskId = said?.data?.task_id;
  if (answer.status === 200 && said?.code === SUCCESS && typeof taskId === 'string' && taskId !== '')
    return {
      status: 200,
      text: answer.text,
      video: { id: `${reqKey}/${taskId}`, status: 'queued', seconds: job.seconds, size: job.size },
    };
  if (answer.status !== 200 || said?.code === undefined) return { ...answer, video: undefined };
  return refusedAnswer(
    typeof said.message === 'string' ? said.message : 'the Jimeng task was refused',
    String(said.code),
  );
}

async function fetchJob(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  id: string,
  timeoutMs: number,
): Promise<UpstreamVideo | undefined> {
  if (!isJimengId(id)) return undefined;
  const slash = id.indexOf('/');
  const answer = await call(
    channel,
    dispatcher,
    'CVSync2AsyncGetResult',
    { req_key: id.slice(0, slash), task_id: id.slice(slash + 1) },
    timeoutMs,
  );
  // Volcengine answers refusals of the task with an HTTP error and a `code` too; a gateway error has no code.
  return videoOfJimengResult(id, parseJson(answer.text));
}

export const jimengApi: NativeVideoApi = {
  isUsableKey: (key) => jimengKeyPair(key) !== undefined,
  submit,
  fetch: fetchJob,
};

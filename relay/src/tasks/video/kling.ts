/**
 * Kling (https://app.klingai.com/global/dev/document-api), channel type 50 (the reference's number), behind the OpenAI video API clients
 * call. The channel's key is `<access key>|<secret key>`; every call carries a fresh HS256 JWT
 * (`{ iss: access key, exp: now + 30 min, nbf: now - 5 s }`, signed with the secret key) as its bearer.
 * `POST <base>/v1/videos/text2video` (or `image2video` with a first frame) `{ model_name, prompt, duration: "5" |
 * "10", aspect_ratio, mode }` answers `{ code: 0, data: { task_id, task_status } }`; `GET
 * <base>/v1/videos/<kind>/<task_id>` reports `task_status` submitted → processing → succeed | failed and, when done,
 * `task_result.videos[0]` (`url`, `duration`). The clip is a public CDN address, downloaded without credentials.
 */

import { createHmac } from 'node:crypto';
import { isRecord } from '@turnpike/core/json';
import { type Dispatcher, request } from 'undici';
import { baseUrlOf } from '../../providers/provider.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import type { NativeJob, NativeSubmitAnswer, NativeVideoApi } from './native.ts';
import type { UpstreamVideo } from './wire.ts';

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** The bearer token of a call, from the channel's `<access key>|<secret key>`; undefined for any other key. */
export function klingToken(key: string, nowSeconds: number): string | undefined {
  const [access, secret, ...rest] = key.split('|').map((part) => part.trim());
  if (!access || !secret || rest.length > 0) return undefined;
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(
    JSON.stringify({ iss: access, exp: nowSeconds + 1800, nbf: nowSeconds - 5 }),
  )}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

/** The task path and body of a job: an aspect ratio from the size, the first frame as Kling takes it. */
export function klingRequestOf(job: NativeJob): {
  kind: 'text2video' | 'image2video';
  body: Record<string, unknown>;
} {
  const [width = 0, height = 0] = job.size.split('x').map(Number);
  const body: Record<string, unknown> = {
    model_name: job.model,
    prompt: job.prompt,
    duration: String(job.seconds),
    aspect_ratio: width === height ? '1:1' : width > height ? '16:9' : '9:16',
    mode: 'std',
  };
  if (!job.image) return { kind: 'text2video', body };
  // Kling takes an address, or the bare Base64 of the image (no data: prefix).
  const inline = /^data:image\/[\w.+-]+;base64,(.+)$/s.exec(job.image);
  return { kind: 'image2video', body: { ...body, image: inline ? inline[1] : job.image } };
}

/** An upstream id the gateway keeps: `<kind>/<task_id>`, so the poll knows which route to ask. */
export const isKlingId = (id: unknown): id is string =>
  typeof id === 'string' && /^(text2video|image2video)\/[\w-]{1,128}$/.test(id);

/** A Kling task answer read as an OpenAI video job, under the gateway's `<kind>/<task_id>` id. */
export function videoOfKlingTask(
  kind: string,
  answer: unknown,
): (UpstreamVideo & { content_uri?: string }) | undefined {
  if (!isRecord(answer) || answer.code !== 0 || !isRecord(answer.data)) return undefined;
  const { task_id: taskId, task_status: status, task_status_msg: message, task_result: result } = answer.data;
  if (typeof taskId !== 'string') return undefined;
  const id = `${kind}/${taskId}`;
  if (status === 'failed')
    return {
      id,
      status: 'failed',
      error: {
        code: 'failed',
        message: typeof message === 'string' && message !== '' ? message : 'the task failed',
      },
    };
  if (status === 'succeed') {
    const videos = isRecord(result) && Array.isArray(result.videos) ? result.videos : [];
    const first = videos[0] as { url?: unknown; duration?: unknown } | undefined;
    if (typeof first?.url !== 'string' || !/^https?:\/\//.test(first.url))
      return {
        id,
        status: 'failed',
        error: { code: 'no_video', message: 'the task succeeded without a video' },
      };
    const seconds = typeof first.duration === 'string' ? Math.round(Number(first.duration)) : undefined;
    return {
      id,
      status: 'completed',
      progress: 100,
      content_uri: first.url,
      ...(seconds !== undefined && Number.isFinite(seconds) ? { seconds } : {}),
    };
  }
  return { id, status: status === 'processing' ? 'in_progress' : 'queued' };
}

async function call(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  path: string,
  init: { method: 'GET' | 'POST'; json?: unknown; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  const token = klingToken(channel.key ?? '', Math.floor(Date.now() / 1000));
  if (!token) throw new Error(`channel ${channel.id}'s key is not "<access key>|<secret key>"`);
  const answer = await request(`${baseUrlOf(channel)}/v1/videos/${path}`, {
    dispatcher,
    method: init.method,
    headers: {
      ...channel.headers,
      authorization: `Bearer ${token}`,
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    headersTimeout: init.timeoutMs,
    bodyTimeout: init.timeoutMs,
  });
  return { status: answer.statusCode, text: await answer.body.text() };
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

async function klingSubmit(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  job: NativeJob,
  timeoutMs: number,
): Promise<NativeSubmitAnswer> {
  const { kind, body } = klingRequestOf(job);
  const answer = await call(channel, dispatcher, kind, { method: 'POST', json: body, timeoutMs });
  const video = answer.status === 200 ? videoOfKlingTask(kind, parse(answer.text)) : undefined;
  // Kling refuses inside a 200 too (`code` not 0): read as the refusal it is.
  const accepted =
    video && video.status !== 'failed' ? { ...video, seconds: job.seconds, size: job.size } : undefined;
  const said = parse(answer.text) as { code?: unknown; message?: unknown } | undefined;
  const text =
    accepted || answer.status !== 200
      ? answer.text
      : JSON.stringify({
          error: {
            message: typeof said?.message === 'string' ? said.message : 'the Kling task was refused',
            type: 'upstream_error',
            code: String(said?.code ?? 'refused'),
          },
        });
  return { status: accepted || answer.status !== 200 ? answer.status : 400, text, video: accepted };
}

async function klingFetch(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  id: string,
  timeoutMs: number,
): Promise<UpstreamVideo | undefined> {
  if (!isKlingId(id)) return undefined;
  const kind = id.split('/')[0] as string;
  const answer = await call(channel, dispatcher, id, { method: 'GET', timeoutMs });
  return answer.status === 200 ? videoOfKlingTask(kind, parse(answer.text)) : undefined;
}

/** Kling behind the native shape: a key that is not `<access key>|<secret key>` cannot sign a call. */
export const klingApi: NativeVideoApi = {
  isUsableKey: (key) => klingToken(key, Math.floor(Date.now() / 1000)) !== undefined,
  submit: klingSubmit,
  fetch: klingFetch,
};

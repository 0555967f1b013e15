/**
 * Vidu's enterprise API (https://platform.vidu.cn/docs/text-to-video, /image-to-video and /get-generation), channel
 * type 52, behind the OpenAI video API clients call. Every call carries `Authorization: Token <key>`.
 * - `POST <base>/ent/v2/text2video` `{ model, prompt, duration, aspect_ratio }`, or `POST <base>/ent/v2/img2video`
 *   `{ model, images: [<address or data URL>], prompt, duration }` with a first frame, answers `{ task_id, state,
 *   duration, … }`.
 * - `GET <base>/ent/v2/tasks/{id}/creations` answers `{ id, state, err_code, creations: [{ url, cover_url }] }`,
 *   `state` one of `created`, `queueing`, `processing`, `success`, `failed`.
 * The clip (`creations[0].url`, valid 24 hours) is a public address, fetched without credentials. Vidu reports no
 * length of its own beyond what was asked: a clip stays charged at that length.
 */
import { isRecord } from '@turnpike/core/json';
import type { Dispatcher } from 'undici';
import { baseUrlOf } from '../../providers/provider.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import {
  aspectRatioOf,
  callJson,
  keyedHeaders,
  type NativeJob,
  type NativeSubmitAnswer,
  type NativeVideoApi,
  parseJson,
} from './native.ts';
import type { UpstreamVideo } from './wire.ts';

/** A Vidu key is one token, with nothing that would break the header. */
export const isViduKey = (key: string): boolean => /^[^\s|]+$/.test(key.trim());

/** The route and body of a job. */
export function viduRequestOf(job: NativeJob): {
  route: 'text2video' | 'img2video';
  body: Record<string, unknown>;
} {
  if (job.image)
    return {
      route: 'img2video',
      body: { model: job.model, images: [job.image], prompt: job.prompt, duration: job.seconds },
    };
  return {
    route: 'text2video',
    body: {
      model: job.model,
      prompt: job.prompt,
      duration: job.seconds,
      aspect_ratio: aspectRatioOf(job.size),
    },
  };
}

/** A task answer (`creations` or the submit's) read as an OpenAI video job. */
export function videoOfViduTask(
  id: string,
  answer: unknown,
): (UpstreamVideo & { content_uri?: string }) | undefined {
  if (!isRecord(answer) || typeof answer.state !== 'string') return undefined;
  switch (answer.state) {
    case 'created':
    case 'queueing':
      return { id, status: 'queued' };
    case 'processing':
      return { id, status: 'in_progress' };
    case 'success': {
      const first = Array.isArray(answer.creations)
        ? (answer.creations[0] as { url?: unknown } | undefined)
        : undefined;
      return typeof first?.url === 'string' && /^https?:\/\//.test(first.url)
        ? { id, status: 'completed', progress: 100, content_uri: first.url }
        : {
            id,
            status: 'failed',
            error: { code: 'no_video', message: 'the task succeeded without a video' },
          };
    }
    case 'failed': {
      const code = typeof answer.err_code === 'string' && answer.err_code !== '' ? answer.err_code : 'failed';
      return { id, status: 'failed', error: { code, message: `the Vidu task failed (${code})` } };
    }
    default:
      return undefined;
  }
}

const headersOf = (channel: RelayChannel, json: boolean) => keyedHeaders(channel, 'Token', json);

async function submit(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  job: NativeJob,
  timeoutMs: number,
): Promise<NativeSubmitAnswer> {
  const { route, body } = viduRequestOf(job);
  const answer = await callJson(dispatcher, `${baseUrlOf(channel)}/ent/v2/${route}`, {
    method: 'POST',
    headers: headersOf(channel, true),
    body: JSON.stringify(body),
    timeoutMs,
  });
  const said = parseJson(answer.text) as { task_id?: unknown } | undefined;
  const taskId = said?.task_id;
  const video =
    answer.status === 200 && typeof taskId === 'string' && /^[\w-]{1,128}$/.test(taskId)
      ? videoOfViduTask(taskId, said)
      : undefined;
  if (!video || video.status === 'failed')
    return { ...answer, status: answer.status === 200 ? 502 : answer.status, video: undefined };
  return { ...answer, video: { ...video, seconds: job.seconds, size: job.size } };
}

async function fetchJob(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  id: string,
  timeoutMs: number,
): Promise<UpstreamVideo | undefined> {
  if (!/^[\w-]{1,128}$/.test(id)) return undefined;
  const answer = await callJson(dispatcher, `${baseUrlOf(channel)}/ent/v2/tasks/${id}/creations`, {
    method: 'GET',
    headers: headersOf(channel, false),
    timeoutMs,
  });
  return answer.status === 200 ? videoOfViduTask(id, parseJson(answer.text)) : undefined;
}

export const viduApi: NativeVideoApi = { isUsableKey: isViduKey, submit, fetch: fetchJob };

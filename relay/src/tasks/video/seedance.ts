/**
 * Doubao Seedance on Volcano Ark's video generation tasks (create: https://www.volcengine.com/docs/82379/1520757,
 * query: https://www.volcengine.com/docs/82379/1521309), channel type 54, behind the OpenAI video API clients call.
 * Every call carries `Authorization: Bearer <Ark API key>`.
 * - `POST <base>/api/v3/contents/generations/tasks` `{ model, content: [{ type: "text", text: "<prompt> --rs 720p
 *   --rt 16:9 --dur 5" }, { type: "image_url", image_url: { url }, role: "first_frame" }?] }` (the output is set by
 *   the text commands the document describes) answers `{ id }`.
 * - `GET <base>/api/v3/contents/generations/tasks/{id}` answers `{ id, status, error, content: { video_url },
 *   duration, resolution, ratio }`, `status` one of `queued`, `running`, `succeeded`, `failed`, `cancelled`, `expired`.
 * The clip (valid 24 hours) is a public address, fetched without credentials. Ark reports the clip's `duration`, so
 * a shorter clip is settled like OpenAI's.
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

/** 720p up to 1280 pixels on the long side, 1080p above (the tier price.ts charges). */
export const seedanceResolutionOf = (size: string): '720p' | '1080p' => {
  const [width = 0, height = 0] = size.split('x').map(Number);
  return Math.max(width, height) > 1280 ? '1080p' : '720p';
};

/** The create body of a job. */
export function seedanceRequestOf(job: NativeJob): Record<string, unknown> {
  // A first frame sets the frame's shape; without one the ratio comes from the size.
  const commands = [
    `--rs ${seedanceResolutionOf(job.size)}`,
    ...(job.image ? [] : [`--rt ${aspectRatioOf(job.size)}`]),
    `--dur ${job.seconds}`,
  ].join(' ');
  const content: Record<string, unknown>[] = [{ type: 'text', text: `${job.prompt} ${commands}` }];
  if (job.image) content.push({ type: 'image_url', image_url: { url: job.image }, role: 'first_frame' });
  return { model: job.model, content };
}

/** A task answer read as an OpenAI video job. */
export function videoOfSeedanceTask(answer: unknown): (UpstreamVideo & { content_uri?: string }) | undefined {
  if (!isRecord(answer) || typeof answer.id !== 'string' || typeof answer.status !== 'string')
    return undefined;
  const id = answer.id;
  switch (answer.status) {
    case 'queued':
      return { id, status: 'queued' };
    case 'running':
      return { id, status: 'in_progress' };
    case 'succeeded': {
      const url = isRecord(answer.content) ? answer.content.video_url : undefined;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url))
        return {
          id,
          status: 'failed',
          error: { code: 'no_video', message: 'the task succeeded without a video' },
        };
      return {
        id,
        status: 'completed',
        progress: 100,
        content_uri: url,
        ...(typeof answer.duration === 'number' && Number.isInteger(answer.duration)
          ? { seconds: answer.duration }
          : {}),
      };
    }
    case 'failed':
    case 'cancelled':
    case 'expired': {
      const error = isRecord(answer.error) ? answer.error : {};
      return {
        id,
        status: 'failed',
        error: {
          code: typeof error.code === 'string' ? error.code : answer.status,
          message:
            typeof error.message === 'string' ? error.message : `the Seedance task is ${answer.status}`,
        },
      };
    }
    default:
      return undefined;
  }
}

const headersOf = (channel: RelayChannel, json: boolean) => keyedHeaders(channel, 'Bearer', json);

const isTaskId = (id: unknown): id is string => typeof id === 'string' && /^[\w-]{1,128}$/.test(id);

async function submit(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  job: NativeJob,
  timeoutMs: number,
): Promise<NativeSubmitAnswer> {
  const answer = await callJson(dispatcher, `${baseUrlOf(channel)}/api/v3/contents/generations/tasks`, {
    method: 'POST',
    headers: headersOf(channel, true),
    body: JSON.stringify(seedanceRequestOf(job)),
    timeoutMs,
  });
  const id = (parseJson(answer.text) as { id?: unknown } | undefined)?.id;
  if (answer.status !== 200 || !isTaskId(id))
    return { ...answer, status: answer.status === 200 ? 502 : answer.status, video: undefined };
  return { ...answer, video: { id, status: 'queued', seconds: job.seconds, size: job.size } };
}

async function fetchJob(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  id: string,
  timeoutMs: number,
): Promise<UpstreamVideo | undefined> {
  if (!isTaskId(id)) return undefined;
  const answer = await callJson(dispatcher, `${baseUrlOf(channel)}/api/v3/contents/generations/tasks/${id}`, {
    method: 'GET',
    headers: headersOf(channel, false),
    timeoutMs,
  });
  const video = answer.status === 200 ? videoOfSeedanceTask(parseJson(answer.text)) : undefined;
  return video?.id === id ? video : undefined;
}

export const seedanceApi: NativeVideoApi = {
  isUsableKey: (key) => key.trim() !== '',
  submit,
  fetch: fetchJob,
};

/**
 * The reference's own video routes, for the clients written against it, on the same task machinery and billing as
 * `/v1/videos` (video.ts): the same task row, hold, charge, settlement and refund, whatever channel type serves the
 * model.
 * - Its unified shape (https://docs.newapi.pro/en/docs/api/ai-model/videos/createvideogeneration and
 *   /get-video-generation): `POST /v1/video/generations` `{ model, prompt, image?, duration?, width?, height?, … }`
 *   answers `{ task_id, status: "queued" }`; `GET /v1/video/generations/{task_id}` answers `{ task_id, status:
 *   queued | in_progress | completed | failed, url, format, metadata: { duration, width, height }, error }`.
 * - Kling's native paths (https://app.klingai.com/global/dev/document-api): `POST /kling/v1/videos/text2video` and
 *   `/image2video` `{ model_name, prompt, duration, aspect_ratio, image }`, answered `{ code: 0, message, request_id,
 *   data: { task_id, task_status, created_at, updated_at } }`; `GET /kling/v1/videos/<kind>/{task_id}` adds
 *   `task_result.videos[{ id, url, duration }]` once it succeeded. Refusals in Kling's `{ code, message, request_id }`.
 * - Jimeng's native route (https://docs.newapi.pro/en/docs/api/ai-model/videos/jimeng/createjimengvideo): `POST
 *   /jimeng/?Action=CVSync2AsyncSubmitTask|CVSync2AsyncGetResult&Version=…` with Jimeng's body, answered `{ code: 10000,
 *   message, request_id, data }` (`data.task_id`; `data.status` in_queue | generating | done, `data.video_url`).
 * A finished video's `url` is the gateway's own `/v1/videos/{id}/content` (the same bearer downloads it), never the
 * provider's address; the ids are the gateway's.
 */

import type { Task } from '@turnpike/core/db/schema/index';
import { TaskStatus } from '@turnpike/core/domain/tasks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RelayError } from '../../contract.ts';
import { toOpenAiErrorBody } from '../../errors.ts';
import type { RelayContext } from '../../pipeline/context.ts';
import { authenticateTaskRequest } from '../charge.ts';
import { freshVideo } from './fresh.ts';
import { propertiesOf } from './task-row.ts';
import {
  invalid,
  ownVideo,
  refuseAs,
  setVideoErrorHandler,
  submitVideo,
  type VideoAnswer,
  type VideoJob,
} from './video.ts';
import { DEFAULT_VIDEO_SIZE, isVideoSize, parseSeconds } from './wire.ts';

type Body = Record<string, unknown>;

const UNIFIED: VideoAnswer = {
  task: (row) => ({ task_id: row.taskId, status: 'queued' }),
  refusal: toOpenAiErrorBody,
};

/** Kling's refusal shape; its codes are numbers (1xxx for the request, 5xxx for the service). */
const KLING: VideoAnswer = {
  task: (row) => klingTaskOf(row, undefined),
  refusal: (error: RelayError, requestId: string) => ({
    code: error.status >= 500 ? 5000 : error.status === 401 ? 1000 : error.status === 403 ? 1101 : 1200,
    message: error.message,
    request_id: requestId,
  }),
};

const JIMENG: VideoAnswer = {
  task: (row) => ({ code: 10000, message: 'Success', request_id: row.taskId, data: { task_id: row.taskId } }),
  refusal: (error: RelayError, requestId: string) => ({
    code: error.status >= 500 ? 50500 : error.status === 403 ? 50403 : 50400,
    message: error.message,
    request_id: requestId,
    data: null,
  }),
};

/** Where the caller downloads a finished video: the gateway's own content route. */
function contentUrlOf(row: Task, request: FastifyRequest): string {
  return `${request.protocol}://${request.host}/v1/videos/${row.taskId}/content`;
}

/** The clip's length: what the provider reported, else what was asked. */
function secondsOf(row: Task): number {
  const data = (row.data ?? {}) as { seconds?: unknown };
  return parseSeconds(data.seconds) ?? propertiesOf(row).seconds;
}

/** The job of a reference request (the same checks as `/v1/videos`), or a refusal. */
function jobOf(input: {
  model: unknown;
  prompt: unknown;
  seconds: unknown;
  size: string;
  image: unknown;
}): VideoJob | RelayError {
  const { model, prompt } = input;
  if (typeof prompt !== 'string' || prompt.trim() === '')
    return invalid('prompt is required and must be a non-empty string', 'prompt');
  if (typeof model !== 'string' || model === '' || model.length > 128)
    return invalid('model is required and must be a model name', 'model');
  const seconds = input.seconds === undefined ? undefined : parseSeconds(input.seconds);
  if (input.seconds !== undefined && seconds === undefined)
    return invalid('duration must be a whole number of seconds from 1 to 60', 'duration');
  if (input.image !== undefined && (typeof input.image !== 'string' || input.image === ''))
    return invalid('image must be an address or a data URL', 'image');
  const body: Body = {
    prompt,
    size: input.size,
    ...(seconds === undefined ? {} : { seconds: String(seconds) }),
  };
  if (typeof input.image === 'string') body.input_reference = { image_url: input.image };
  return {
    action: 'GENERATE',
    model,
    seconds: seconds ?? 4,
    secondsGiven: seconds !== undefined,
    size: input.size,
    prompt,
    payload: { kind: 'json', body },
  };
}

async function submitAs(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: VideoAnswer,
  read: (body: Body) => VideoJob | RelayError,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuseAs(answer, request, reply, auth.error);
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return refuseAs(answer, request, reply, invalid('the request body must be a JSON object'));
  const job = read(body as Body);
  if ('status' in job) return refuseAs(answer, request, reply, job);
  return submitVideo(ctx, request, reply, auth.caller, job, answer);
}

function unifiedJob(body: Body): VideoJob | RelayError {
  const { width, height } = body;
  const size =
    typeof width === 'number' && typeof height === 'number' && isVideoSize(`${width}x${height}`)
      ? `${width}x${height}`
      : DEFAULT_VIDEO_SIZE;
  return jobOf({
    model: body.model,
    prompt: body.prompt,
    seconds: body.duration,
    size,
    image: body.image,
  });
}

function unifiedStatusOf(status: string): 'queued' | 'in_progress' | 'completed' | 'failed' {
  if (status === TaskStatus.Success) return 'completed';
  if (status === TaskStatus.Failure) return 'failed';
  if (status === TaskStatus.InProgress) return 'in_progress';
  return 'queued';
}

function unifiedTaskOf(row: Task, request: FastifyRequest) {
  const status = unifiedStatusOf(row.status);
  const [width = 0, height = 0] = propertiesOf(row).size.split('x').map(Number);
  return {
    task_id: row.taskId,
    status,
    ...(status === 'completed' ? { url: contentUrlOf(row, request), format: 'mp4' } : {}),
    metadata: { duration: secondsOf(row), width, height },
    error: status === 'failed' ? { code: 'video_generation_failed', message: row.failReason } : null,
  };
}

const KLING_RATIOS: Record<string, string> = { '16:9': '1280x720', '9:16': '720x1280', '1:1': '720x720' };

function klingJob(kind: 'text2video' | 'image2video', body: Body): VideoJob | RelayError {
  const ratio = body.aspect_ratio ?? '16:9';
  const size = typeof ratio === 'string' ? KLING_RATIOS[ratio] : undefined;
  if (!size) return invalid('aspect_ratio must be 16:9, 9:16 or 1:1', 'aspect_ratio');
  if (kind === 'image2video' && (typeof body.image !== 'string' || body.image === ''))
    return invalid('image is required for image2video', 'image');
  const image =
    kind === 'image2video' && typeof body.image === 'string' && !/^(https?:|data:)/.test(body.image)
      ? `data:image/png;base64,${body.image}`
      : body.image;
  return jobOf({
    model: body.model_name ?? body.model ?? 'kling-v1',
    prompt: body.prompt,
    seconds: body.duration,
    size,
    image: kind === 'image2video' ? image : undefined,
  });
}

const KLING_STATUS: Record<string, string> = {
  [TaskStatus.Success]: 'succeed',
  [TaskStatus.Failure]: 'failed',
  [TaskStatus.InProgress]: 'processing',
};

function klingTaskOf(row: Task, request: FastifyRequest | undefined) {
  const status = KLING_STATUS[row.status] ?? 'submitted';
  return {
    code: 0,
    message: 'SUCCEED',
    request_id: row.taskId,
    data: {
      task_id: row.taskId,
      task_status: status,
      task_status_msg: status === 'failed' ? row.failReason : '',
      created_at: row.submitTime * 1000,
      updated_at: row.updatedAt * 1000,
      ...(status === 'succeed' && request
        ? {
            task_result: {
              videos: [{ id: row.taskId, url: contentUrlOf(row, request), duration: String(secondsOf(row)) }],
            },
          }
        : {}),
    },
  };
}

const JIMENG_STATUS: Record<string, string> = {
  [TaskStatus.Success]: 'done',
  [TaskStatus.InProgress]: 'generating',
};

function jimengJob(body: Body): VideoJob | RelayError {
  const frames = body.frames;
  if (frames !== undefined && frames !== 121 && frames !== 241)
    return invalid('frames must be 121 (5 s) or 241 (10 s)', 'frames');
  const ratio = typeof body.aspect_ratio === 'string' ? KLING_RATIOS[body.aspect_ratio] : undefined;
  const images = Array.isArray(body.image_urls) ? body.image_urls : undefined;
  const inline = Array.isArray(body.binary_data_base64) ? body.binary_data_base64 : undefined;
  const image =
    typeof images?.[0] === 'string'
      ? images[0]
      : typeof inline?.[0] === 'string'
        ? `data:image/png;base64,${inline[0]}`
        : undefined;
  return jobOf({
    model: body.req_key,
    prompt: body.prompt,
    seconds: frames === undefined ? undefined : frames === 241 ? 10 : 5,
    size: ratio ?? '1280x720',
    image,
  });
}

async function jimengRoute(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const { Action: action } = request.query as { Action?: unknown };
  if (action === 'CVSync2AsyncSubmitTask') return submitAs(ctx, request, reply, JIMENG, jimengJob);
  if (action !== 'CVSync2AsyncGetResult')
    return refuseAs(
      JIMENG,
      request,
      reply,
      invalid('Action must be CVSync2AsyncSubmitTask or CVSync2AsyncGetResult'),
    );
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuseAs(JIMENG, request, reply, auth.error);
  const id = (request.body as { task_id?: unknown } | undefined)?.task_id;
  const owned = typeof id === 'string' ? await ownVideo(ctx, auth.caller.user.id, id) : undefined;
  const row = owned && (await freshVideo(ctx, owned));
  if (!row)
    return reply.send({
      code: 10000,
      message: 'Success',
      request_id: request.id,
      data: { status: 'not_found' },
    });
  if (row.status === TaskStatus.Failure)
    return reply.code(400).send(JIMENG.refusal(invalid(row.failReason), request.id));
  const status = JIMENG_STATUS[row.status] ?? 'in_queue';
  return reply.send({
    code: 10000,
    message: 'Success',
    request_id: request.id,
    data: { status, ...(status === 'done' ? { video_url: contentUrlOf(row, request) } : {}) },
  });
}

async function readOwn(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  answer: VideoAnswer,
  render: (row: Task, request: FastifyRequest) => unknown,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuseAs(answer, request, reply, auth.error);
  const row = await ownVideo(ctx, auth.caller.user.id, request.params.id);
  if (!row)
    return refuseAs(answer, request, reply, {
      ...invalid(`task ${request.params.id} not found`),
      status: 404,
    });
  return reply.send(render(await freshVideo(ctx, row), request));
}

/** The reference's video routes, in a scope of their own (each family answers its refusals in its own shape). */
export function registerReferenceVideoRoutes(app: FastifyInstance, ctx: RelayContext) {
  void app.register(async (scope) => {
    setVideoErrorHandler(scope, UNIFIED);
    scope.post('/v1/video/generations', (request, reply) =>
      submitAs(ctx, request, reply, UNIFIED, unifiedJob),
    );
    scope.get<{ Params: { id: string } }>('/v1/video/generations/:id', (request, reply) =>
      readOwn(ctx, request, reply, UNIFIED, unifiedTaskOf),
    );
  });
  void app.register(async (scope) => {
    setVideoErrorHandler(scope, KLING);
    for (const kind of ['text2video', 'image2video'] as const) {
      scope.post(`/kling/v1/videos/${kind}`, (request, reply) =>
        submitAs(ctx, request, reply, KLING, (body) => klingJob(kind, body)),
      );
      scope.get<{ Params: { id: string } }>(`/kling/v1/videos/${kind}/:id`, (request, reply) =>
        readOwn(ctx, request, reply, KLING, klingTaskOf),
      );
    }
  });
  void app.register(async (scope) => {
    setVideoErrorHandler(scope, JIMENG);
    scope.post('/jimeng/', (request, reply) => jimengRoute(ctx, request, reply));
  });
}

/**
 * OpenAI's video API for clients (https://platform.openai.com/docs/api-reference/videos): `POST /v1/videos` (JSON or
 * multipart with `input_reference`), `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`, `POST
 * /v1/videos/{id}/remix`, `GET /v1/videos`, `DELETE /v1/videos/{id}`, relayed to OpenAI and Azure OpenAI channels
 * (upstream.ts). The id a client sees is the gateway's own; reads answer from the tasks table (kept fresh by the
 * poller, and by a read that finds its task stale: fresh.ts), content is streamed from the channel. A submit holds and charges its requested length at the model's
 * price per second (price.ts, docs/adr/0033).
 */

import type { Readable } from 'node:stream';
import { type Task, tasks } from '@turnpike/core/db/schema/index';
import { isDatabaseUnreachable } from '@turnpike/core/db/unreachable';
import { isTaskFinished, TaskPlatform, TaskStatus } from '@turnpike/core/domain/tasks';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, asc, desc, eq, gt, lt, sql } from 'drizzle-orm';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RelayError } from '../../contract.ts';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  gatewayFailureOf,
  localError,
  parseUpstreamError,
  toOpenAiErrorBody,
} from '../../errors.ts';
import { type SpooledUpload, spoolUpload, UploadError } from '../../formats/multipart.ts';
import { checkModelAllowed } from '../../pipeline/authenticate.ts';
import type { RelayContext } from '../../pipeline/context.ts';
import { pickChannel } from '../../routing/pick.ts';
import type { Caller } from '../../state/auth-cache.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import {
  authenticateTaskRequest,
  chargeAccepted,
  holdTaskPrice,
  isTaskChannelUsable,
  pickTaskChannel,
  recordTaskCall,
  settleTaskCharge,
  storableJson,
  storableText,
  taskPriceOf,
} from '../charge.ts';
import { SubmitOutcome, taskMetricsOf } from '../metrics.ts';
import type { TaskProvider } from '../provider.ts';
import { freshVideo } from './fresh.ts';
import { clipLengthsOf, fetchPublicClip } from './native.ts';
import { pollVideos } from './poll.ts';
import { perSecondQuota, quotaForSeconds } from './price.ts';
import { isVideoId, newVideoId, propertiesOf, toClientVideo, type VideoProperties } from './task-row.ts';
import { callVideoApi, isNativeVideoType, NATIVE_VIDEO_APIS, VIDEO_CHANNEL_TYPES } from './upstream.ts';
import { veoContent, veoSubmit } from './veo.ts';
import {
  DEFAULT_VIDEO_MODEL,
  DEFAULT_VIDEO_SECONDS,
  DEFAULT_VIDEO_SIZE,
  isVideoSize,
  MAX_VIDEO_SECONDS,
  parseSeconds,
  readUpstreamVideo,
  type UpstreamAnswer,
  type UpstreamVideo,
} from './wire.ts';

const SUBMIT_TIMEOUT_MS = 60_000;
const CONTENT_TIMEOUT_MS = 120_000;
const CALL_TIMEOUT_MS = 30_000;
const VARIANTS = new Set(['video', 'thumbnail', 'spritesheet']);
const DEFAULT_LIST_LIMIT = 20;
const MAX_LIST_LIMIT = 100;

/** Worth another channel: the upstream is busy or failing (as for every other relayed call). */
const isRetryable = (status: number): boolean => status === 429 || (status >= 500 && status !== 504);

/** How a route answers a submit: the stored task, or a refusal, each in its caller's shape. */
export interface VideoAnswer {
  readonly task: (row: Task, request: FastifyRequest) => unknown;
  readonly refusal: (error: RelayError, requestId: string) => unknown;
}

const OPENAI_ANSWER: VideoAnswer = { task: (row) => toClientVideo(row), refusal: toOpenAiErrorBody };

export function refuseAs(
  answer: VideoAnswer,
  request: FastifyRequest,
  reply: FastifyReply,
  error: RelayError,
) {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply.code(error.status).send(answer.refusal(error, request.id));
}

const refuse = (request: FastifyRequest, reply: FastifyReply, error: RelayError) =>
  refuseAs(OPENAI_ANSWER, request, reply, error);

export const invalid = (message: string, param: string | null = null): RelayError => ({
  ...localError(400, 'invalid_value', message, 'invalid_request_error'),
  param,
});

const notFound = (id: string): RelayError =>
  localError(404, 'video_not_found', `video ${id} not found`, 'invalid_request_error');

/** What a submit asks for, read from the client's JSON or form. */
export interface VideoJob {
  readonly action: 'GENERATE' | 'REMIX';
  readonly model: string;
  readonly seconds: number;
  /** Whether the client named the length (else {@link DEFAULT_VIDEO_SECONDS}, or the channel's own default). */
  readonly secondsGiven: boolean;
  readonly size: string;
  readonly prompt: string;
  /** The task a remix starts from (it goes to that task's channel). */
  readonly source?: Task;
  readonly payload:
    | { kind: 'json'; body: Record<string, unknown> }
    | { kind: 'form'; upload: SpooledUpload }
    | { kind: 'remix'; body: { prompt: string } };
}

/** The fields of a create, from JSON or the form's text fields. */
function readCreate(fields: (name: string) => unknown): Omit<VideoJob, 'action' | 'payload'> | RelayError {
  const prompt = fields('prompt');
  if (typeof prompt !== 'string' || prompt.trim() === '')
    return invalid('prompt is required and must be a non-empty string', 'prompt');
  const model = fields('model') ?? DEFAULT_VIDEO_MODEL;
  if (typeof model !== 'string' || model === '' || model.length > 128)
    return invalid('model must be a model name', 'model');
  const rawSeconds = fields('seconds');
  const seconds = rawSeconds === undefined ? DEFAULT_VIDEO_SECONDS : parseSeconds(rawSeconds);
  if (seconds === undefined)
    return invalid(`seconds must be a whole number of seconds from 1 to ${MAX_VIDEO_SECONDS}`, 'seconds');
  const size = fields('size') ?? DEFAULT_VIDEO_SIZE;
  if (!isVideoSize(size)) return invalid('size must be WIDTHxHEIGHT, e.g. 720x1280', 'size');
  return { model, seconds, secondsGiven: rawSeconds !== undefined, size, prompt };
}

async function readCreateRequest(request: FastifyRequest): Promise<VideoJob | RelayError> {
  const contentType = request.headers['content-type'] ?? '';
  if (/^multipart\/form-data/i.test(contentType)) {
    let upload: SpooledUpload;
    try {
      upload = await spoolUpload(request.body as Readable, contentType);
    } catch (err) {
      if (err instanceof UploadError)
        return localError(err.status, 'invalid_request', err.message, 'invalid_request_error');
      throw err;
    }
    const job = readCreate((name) => upload.fields.get(name)?.value);
    if ('status' in job) {
      await upload.dispose();
      return job;
    }
    return { ...job, action: 'GENERATE', payload: { kind: 'form', upload } };
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid('the request body must be a JSON object or multipart/form-data');
  const input = body as Record<string, unknown>;
  const job = readCreate((name) => input[name]);
  if ('status' in job) return job;
  return { ...job, action: 'GENERATE', payload: { kind: 'json', body: input } };
}

export async function ownVideo(ctx: RelayContext, userId: number, id: string): Promise<Task | undefined> {
  if (!isVideoId(id)) return undefined;
  const [row] = await ctx.deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.userId, userId), eq(tasks.platform, TaskPlatform.Video), eq(tasks.taskId, id)))
    .limit(1);
  return row && !propertiesOf(row).deleted ? row : undefined;
}

/** An answer to a submit: its status and text, and the job when the upstream accepted it. */
interface SubmitAnswer {
  readonly status: number;
  readonly text: string;
  readonly video: UpstreamVideo | undefined;
}

/** The reference image of a JSON create (`input_reference.image_url`): what the native providers take. */
function referenceImageOf(payload: VideoJob['payload']): string | undefined {
  const reference = payload.kind === 'json' ? payload.body.input_reference : undefined;
  const url = (reference as { image_url?: unknown } | undefined)?.image_url;
  return typeof url === 'string' ? url : undefined;
}

/** Sends the job to `channel`: the create as JSON or the client's form (model swapped), or the remix. */
async function sendJob(
  ctx: RelayContext,
  request: FastifyRequest,
  channel: RelayChannel,
  job: VideoJob,
): Promise<SubmitAnswer> {
  const dispatcher = ctx.upstream.dispatcherFor(channel.proxy);
  const upstreamModel = channel.modelMapping[job.model] ?? job.model;
  const { payload } = job;
  const native = NATIVE_VIDEO_APIS.get(channel.type);
  if (native) {
    if (!native.isUsableKey(channel.key ?? '')) return misconfigured(request, channel);
    if (payload.kind === 'form' && payload.upload.files.length > 0)
      return refusalAnswer('this channel takes input_reference as { image_url } in JSON, not as a file');
    const image = referenceImageOf(payload);
    return native.submit(
      channel,
      dispatcher,
      {
        model: upstreamModel,
        prompt: job.prompt,
        seconds: job.seconds,
        size: job.size,
        ...(image !== undefined ? { image } : {}),
      },
      SUBMIT_TIMEOUT_MS,
    );
  }
  if (channel.type === ProviderTypeId.GeminiVeo) {
    if (payload.kind === 'form' && payload.upload.files.length > 0)
      return refusalAnswer(
        'a Veo channel takes input_reference as { image_url: "data:image/…;base64,…" } in JSON, not as a file',
      );
    const imageUrl = referenceImageOf(payload);
    return veoSubmit(
      channel,
      dispatcher,
      {
        model: upstreamModel,
        prompt: job.prompt,
        seconds: job.seconds,
        size: job.size,
        ...(imageUrl !== undefined ? { imageDataUrl: imageUrl } : {}),
      },
      SUBMIT_TIMEOUT_MS,
    );
  }
  let answer: UpstreamAnswer;
  if (payload.kind === 'remix') {
    const upstreamId = encodeURIComponent(propertiesOf(job.source as Task).upstream_id);
    answer = await callVideoApi(channel, dispatcher, {
      method: 'POST',
      path: `/${upstreamId}/remix`,
      json: payload.body,
      timeoutMs: SUBMIT_TIMEOUT_MS,
    });
  } else if (payload.kind === 'form') {
    answer = await callVideoApi(channel, dispatcher, {
      method: 'POST',
      path: '',
      form: { contentType: payload.upload.contentType, ...payload.upload.open(upstreamModel) },
      timeoutMs: SUBMIT_TIMEOUT_MS,
    });
  } else {
    answer = await callVideoApi(channel, dispatcher, {
      method: 'POST',
      path: '',
      json: { ...payload.body, model: upstreamModel },
      timeoutMs: SUBMIT_TIMEOUT_MS,
    });
  }
  const text = await answer.body.text();
  const video = answer.status === 200 ? readUpstreamVideo(parseJson(text)) : undefined;
  return { status: answer.status, text, video };
}

/**
 * A channel whose key cannot authenticate a call: the channel's trouble (503, the next channel is tried), never the
 * caller's.
 */
function misconfigured(request: FastifyRequest, channel: RelayChannel): SubmitAnswer {
  request.log.warn({ channelId: channel.id, type: channel.type }, 'video channel key has the wrong shape');
  return {
    status: 503,
    text: JSON.stringify({
      error: {
        message: 'the video channel is misconfigured',
        type: 'upstream_error',
        code: 'channel_misconfigured',
      },
    }),
    video: undefined,
  };
}

/** A refusal of the gateway's own, in the shape an upstream's would be read. */
const refusalAnswer = (message: string): SubmitAnswer => ({
  status: 400,
  text: JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'unsupported_parameter' } }),
  video: undefined,
});

/** Submits a job, answering in `answer`'s shape (OpenAI's video object by default). */
export async function submitVideo(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  job: VideoJob,
  answer: VideoAnswer = OPENAI_ANSWER,
) {
  const refuse = (_request: FastifyRequest, _reply: FastifyReply, error: RelayError) =>
    refuseAs(answer, request, reply, error);
  const startedAt = performance.now();
  const count = (outcome: SubmitOutcome) => taskMetricsOf(ctx).recordSubmit('video', job.action, outcome);
  const notAllowed = checkModelAllowed(caller, job.model);
  if (notAllowed) return refuse(request, reply, notAllowed);
  let channel: RelayChannel;
  if (job.source) {
    // A remix is a job of the channel that made its source.
    const origin = ctx.channels.get(job.source.channelId);
    if (!origin || !isTaskChannelUsable(ctx, origin, VIDEO_CHANNEL_TYPES)) {
      count(SubmitOutcome.Rejected);
      return refuse(
        request,
        reply,
        localError(503, 'channel_unavailable', `the channel of video ${job.source.taskId} is not available`),
      );
    }
    channel = origin;
  } else {
    const picked = pickTaskChannel(ctx, caller, job.model, VIDEO_CHANNEL_TYPES);
    if (!('id' in picked)) {
      count(SubmitOutcome.Rejected);
      return refuse(request, reply, picked);
    }
    channel = picked;
  }
  const lengths = clipLengthsOf(channel.type);
  if (lengths) {
    // A converted provider makes its own lengths: its own default, and nothing else is held or charged.
    const seconds = job.secondsGiven ? job.seconds : lengths.fallback;
    if (!lengths.isAllowed(seconds)) {
      count(SubmitOutcome.Rejected);
      return refuse(request, reply, invalid(lengths.says, 'seconds'));
    }
    job = { ...job, seconds };
  }
  const price = taskPriceOf(ctx, job.model, caller.group);
  const perSecond = perSecondQuota({
    model: job.model,
    modelPrice: price.modelPrice,
    groupRatio: price.groupRatio,
    size: job.size,
    quotaPerUnit: ctx.deps.options.get('QuotaPerUnit'),
  });
  const quota = quotaForSeconds(perSecond, job.seconds);
  // The caller's balance refuses the submit before it goes anywhere: never a channel's fault.
  const held = await holdTaskPrice(ctx, caller, quota);
  if (!held.ok) {
    count(SubmitOutcome.Rejected);
    return refuse(request, reply, held.error);
  }
  const retries =
    job.source === undefined && caller.forcedChannelId === undefined ? ctx.deps.options.get('RetryTimes') : 0;
  const tried = new Set<number>();
  let sent: SubmitAnswer | undefined;
  let sentAt = performance.now();
  for (let attempt = 0; ; attempt++) {
    tried.add(channel.id);
    sentAt = performance.now();
    try {
      sent = await sendJob(ctx, request, channel, job);
      // The upstream refusing the channel's own credential is the channel's trouble (the next one is tried), never
      // a 401 that would tell the caller their key is wrong.
      if (sent.status === 401) {
        request.log.warn(
          { channelId: channel.id, type: channel.type },
          'video upstream refused the channel key',
        );
        sent = {
          status: 503,
          text: JSON.stringify({
            error: {
              message: 'the video channel was refused by its upstream',
              type: 'upstream_error',
              code: 'channel_unauthorized',
            },
          }),
          video: undefined,
        };
      }
    } catch (err) {
      sent = undefined;
      request.log.warn({ err, channelId: channel.id }, 'video submit failed');
    }
    if (attempt >= retries || (sent !== undefined && !isRetryable(sent.status))) break;
    const next = pickChannel(ctx.channels.table, {
      group: caller.group,
      model: job.model,
      attempt: attempt + 1,
      tried,
      isAvailable: (id) => isTaskChannelUsable(ctx, ctx.channels.get(id), VIDEO_CHANNEL_TYPES),
    });
    const nextChannel = next && ctx.channels.get(next.channelId);
    if (!nextChannel?.key) break;
    channel = nextChannel;
  }
  const charge = {
    caller,
    hold: held.hold,
    model: job.model,
    channelId: channel.id,
    startedAt,
    quota,
    modelPrice: price.modelPrice,
    groupRatio: price.groupRatio,
  };
  if (sent === undefined) {
    await settleTaskCharge(ctx, request, charge, false);
    count(SubmitOutcome.Error);
    return refuse(request, reply, localError(502, 'upstream_error', 'the video upstream did not answer'));
  }
  const { video } = sent;
  if (!video) {
    await settleTaskCharge(ctx, request, charge, false);
    const error = parseUpstreamError(sent.status >= 400 ? sent.status : 502, sent.text);
    recordTaskCall(ctx, request, charge, {
      status: error.status,
      quota: 0,
      upstreamMs: performance.now() - sentAt,
      provider: 'video',
    });
    count(SubmitOutcome.Refused);
    return refuse(request, reply, error);
  }
  // The task is stored before it is charged: a charge never exists without the task that can refund it.
  const now = Math.floor(Date.now() / 1000);
  const properties: VideoProperties = {
    upstream_id: storableText(video.id).slice(0, 191),
    model: job.model,
    seconds: job.seconds,
    size: job.size,
    per_second_quota: perSecond,
    prompt: storableText(job.prompt).slice(0, 4000),
    remixed_from: job.source?.taskId ?? null,
  };
  let row: Task | undefined;
  try {
    [row] = await ctx.deps.db
      .insert(tasks)
      .values({
        createdAt: now,
        updatedAt: now,
        taskId: newVideoId(),
        platform: TaskPlatform.Video,
        userId: caller.user.id,
        tokenId: caller.token.id,
        channelId: channel.id,
        quota,
        action: job.action,
        status: TaskStatus.Submitted,
        submitTime: now,
        progress: '0%',
        properties,
        data: storableJson(video),
      })
      .returning();
  } catch (err) {
    await settleTaskCharge(ctx, request, charge, false);
    request.log.error({ err, channelId: channel.id }, 'could not store a video task');
    count(SubmitOutcome.Error);
    return refuse(
      request,
      reply,
      localError(500, 'internal_error', 'the video task could not be stored; it was not charged'),
    );
  }
  await chargeAccepted(ctx, request, charge, { upstreamMs: performance.now() - sentAt, provider: 'video' });
  count(SubmitOutcome.Accepted);
  return reply.send(answer.task(row as Task, request));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function create(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  // Who calls is known before an upload is spooled: a stranger's body is never written to disk.
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const job = await readCreateRequest(request);
  if ('status' in job) return refuse(request, reply, job);
  try {
    return await submitVideo(ctx, request, reply, auth.caller, job);
  } finally {
    if (job.payload.kind === 'form') await job.payload.upload.dispose();
  }
}

async function remix(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const body = request.body as { prompt?: unknown } | undefined;
  const prompt = body?.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '')
    return refuse(request, reply, invalid('prompt is required and must be a non-empty string', 'prompt'));
  const source = await ownVideo(ctx, auth.caller.user.id, request.params.id);
  if (!source) return refuse(request, reply, notFound(request.params.id));
  if (source.status !== TaskStatus.Success)
    return refuse(
      request,
      reply,
      invalid(`video ${source.taskId} is not completed; only a completed video can be remixed`),
    );
  const sourceType = ctx.channels.get(source.channelId)?.type;
  if (sourceType !== undefined && isNativeVideoType(sourceType))
    return refuse(request, reply, invalid(`video ${source.taskId} was made by a channel that cannot remix`));
  const properties = propertiesOf(source);
  // A remix keeps its source's length and size: that is what it is held and charged for.
  const data = (source.data ?? {}) as Record<string, unknown>;
  return submitVideo(ctx, request, reply, auth.caller, {
    action: 'REMIX',
    model: properties.model,
    seconds: parseSeconds(data.seconds) ?? properties.seconds,
    secondsGiven: true,
    size: properties.size,
    prompt,
    source,
    payload: { kind: 'remix', body: { prompt } },
  });
}

async function content(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>,
  reply: FastifyReply,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const variant = request.query.variant ?? 'video';
  if (typeof variant !== 'string' || !VARIANTS.has(variant))
    return refuse(request, reply, invalid('variant must be one of video, thumbnail, spritesheet', 'variant'));
  const row = await ownVideo(ctx, auth.caller.user.id, request.params.id);
  if (!row) return refuse(request, reply, notFound(request.params.id));
  if (row.status !== TaskStatus.Success)
    return refuse(request, reply, invalid(`video ${row.taskId} is not completed yet`));
  const channel = ctx.channels.get(row.channelId);
  if (!channel?.key)
    return refuse(
      request,
      reply,
      localError(503, 'channel_unavailable', 'the channel of this video is gone'),
    );
  let upstream: UpstreamAnswer | undefined;
  const dispatcher = ctx.upstream.dispatcherFor(channel.proxy);
  try {
    if (isNativeVideoType(channel.type)) {
      if (variant !== 'video')
        return refuse(request, reply, invalid('this video has no thumbnail or spritesheet', 'variant'));
      const uri = (row.data as { content_uri?: unknown } | null)?.content_uri;
      upstream =
        typeof uri !== 'string'
          ? undefined
          : channel.type === ProviderTypeId.GeminiVeo
            ? await veoContent(channel, dispatcher, uri, CONTENT_TIMEOUT_MS)
            : await fetchPublicClip(dispatcher, uri, CONTENT_TIMEOUT_MS);
      if (!upstream)
        return refuse(
          request,
          reply,
          localError(502, 'upstream_error', 'the video upstream gave no usable address'),
        );
    } else
      upstream = await callVideoApi(channel, dispatcher, {
        method: 'GET',
        path: `/${encodeURIComponent(propertiesOf(row).upstream_id)}/content`,
        query: { variant },
        timeoutMs: CONTENT_TIMEOUT_MS,
      });
  } catch (err) {
    request.log.warn({ err, channelId: channel.id }, 'video content failed');
    return refuse(request, reply, localError(502, 'upstream_error', 'the video upstream did not answer'));
  }
  if (upstream.status !== 200)
    return refuse(request, reply, parseUpstreamError(upstream.status, await upstream.body.text()));
  const type = upstream.headers['content-type'];
  const length = upstream.headers['content-length'];
  reply.header('content-type', typeof type === 'string' ? type : 'application/octet-stream');
  if (typeof length === 'string') reply.header('content-length', length);
  // Piped as it arrives; never the upstream's own URL or headers.
  return reply.send(upstream.body);
}

async function list(
  ctx: RelayContext,
  request: FastifyRequest<{ Querystring: Record<string, unknown> }>,
  reply: FastifyReply,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const { after, order = 'desc' } = request.query;
  const limit = request.query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(request.query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    return refuse(request, reply, invalid(`limit must be from 1 to ${MAX_LIST_LIMIT}`, 'limit'));
  if (order !== 'asc' && order !== 'desc')
    return refuse(request, reply, invalid('order must be asc or desc', 'order'));
  const userId = auth.caller.user.id;
  const where = [
    eq(tasks.userId, userId),
    eq(tasks.platform, TaskPlatform.Video),
    sql`coalesce(${tasks.properties}->>'deleted', '') <> 'true'`,
  ];
  if (after !== undefined) {
    const cursor = typeof after === 'string' ? await ownVideo(ctx, userId, after) : undefined;
    if (!cursor) return refuse(request, reply, invalid('after must name one of your videos', 'after'));
    where.push(order === 'asc' ? gt(tasks.id, cursor.id) : lt(tasks.id, cursor.id));
  }
  const rows = await ctx.deps.db
    .select()
    .from(tasks)
    .where(and(...where))
    .orderBy(order === 'asc' ? asc(tasks.id) : desc(tasks.id))
    .limit(limit + 1);
  const data = rows.slice(0, limit).map(toClientVideo);
  return reply.send({
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: rows.length > limit,
  });
}

async function remove(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const row = await ownVideo(ctx, auth.caller.user.id, request.params.id);
  if (!row) return refuse(request, reply, notFound(request.params.id));
  if (!isTaskFinished(row.status))
    return refuse(
      request,
      reply,
      invalid(`video ${row.taskId} is still being made; only a completed or failed video can be deleted`),
    );
  const channel = ctx.channels.get(row.channelId);
  const upstreamId = propertiesOf(row).upstream_id;
  // Veo and Kling have no delete: their files expire on their own.
  if (channel?.key && upstreamId !== '' && !isNativeVideoType(channel.type)) {
    try {
      const upstream = await callVideoApi(channel, ctx.upstream.dispatcherFor(channel.proxy), {
        method: 'DELETE',
        path: `/${encodeURIComponent(upstreamId)}`,
        timeoutMs: CALL_TIMEOUT_MS,
      });
      const text = await upstream.body.text();
      // Already gone upstream (expired, deleted elsewhere) is as good as deleted.
      if (upstream.status !== 200 && upstream.status !== 404)
        return refuse(request, reply, parseUpstreamError(upstream.status, text));
    } catch (err) {
      request.log.warn({ err, channelId: channel.id }, 'video delete failed');
      return refuse(request, reply, localError(502, 'upstream_error', 'the video upstream did not answer'));
    }
  }
  // The row stays for the task log and the bill; the client no longer sees it.
  await ctx.deps.db
    .update(tasks)
    .set({
      properties: sql`coalesce(${tasks.properties}, '{}'::jsonb) || '{"deleted":true}'::jsonb`,
      updatedAt: Math.floor(Date.now() / 1000),
    })
    .where(eq(tasks.id, row.id));
  return reply.send({ id: row.taskId, object: 'video.deleted', deleted: true });
}

async function retrieve(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(request, reply, auth.error);
  const row = await ownVideo(ctx, auth.caller.user.id, request.params.id);
  if (!row) return refuse(request, reply, notFound(request.params.id));
  return reply.send(toClientVideo(await freshVideo(ctx, row)));
}

/**
 * Fastify's own refusals (unreadable JSON, a body too large), bugs and an unreachable database, in the routes' shape
 * (OpenAI's by default).
 */
export function setVideoErrorHandler(scope: FastifyInstance, answer: VideoAnswer = OPENAI_ANSWER) {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const unreachable = isDatabaseUnreachable(error);
    const failure = unreachable
      ? localError(503, 'database_unavailable', 'the database is unreachable; try again shortly')
      : gatewayFailureOf(error);
    if (failure.status === 500) request.log.error({ err: error }, 'video request failed');
    if (failure.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
    return reply.code(failure.status).send(answer.refusal(failure, request.id));
  });
}

function registerVideoRoutes(scope: FastifyInstance, ctx: RelayContext) {
  setVideoErrorHandler(scope);
  // The form is spooled to disk by the route (formats/multipart.ts), not parsed here.
  scope.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
  scope.post('/v1/videos', (request, reply) => create(ctx, request, reply));
  scope.get('/v1/videos', (request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply) =>
    list(ctx, request, reply),
  );
  scope.get<{ Params: { id: string } }>('/v1/videos/:id', (request, reply) => retrieve(ctx, request, reply));
  scope.delete<{ Params: { id: string } }>('/v1/videos/:id', (request, reply) => remove(ctx, request, reply));
  scope.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(
    '/v1/videos/:id/content',
    (request, reply) => content(ctx, request, reply),
  );
  scope.post<{ Params: { id: string } }>('/v1/videos/:id/remix', (request, reply) =>
    remix(ctx, request, reply),
  );
}

export const videoProvider: TaskProvider = {
  id: 'video',
  carries: 'videos',
  channelTypes: VIDEO_CHANNEL_TYPES,
  register(app: FastifyInstance, ctx: RelayContext) {
    void app.register(async (scope) => registerVideoRoutes(scope, ctx));
  },
  poll: pollVideos,
};

/**
 * Midjourney drawings through Midjourney-Proxy channels (types 2 and 5; https://github.com/novicezk/midjourney-proxy):
 * `/mj/submit/*`, `/mj/task/{id}/fetch`, `/mj/task/list-by-condition`, `/mj/task/{id}/image-seed`, the result image
 * at `/mj/image/{id}` and the proxy's callback at `/mj/notify`; every path also under `/mj-fast`, `/mj-turbo`,
 * `/mj-relax` (passed on to the proxy). Task reads answer from the database; submits are billed when the proxy
 * accepts them and refunded once when the drawing fails (finish.ts).
 */

import type { Midjourney } from '@turnpike/core/db/schema/index';
import { midjourneys } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { FINISHED_TASK_STATUSES, isTaskFinished, TaskStatus } from '@turnpike/core/domain/tasks';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, asc, eq, inArray, notInArray } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fetch, type Response } from 'undici';
import { checkModelAllowed } from '../../pipeline/authenticate.ts';
import { disableInDatabase } from '../../pipeline/channel-health.ts';
import type { RelayContext } from '../../pipeline/context.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import {
  authenticateTaskRequest,
  baseOf,
  chargeAccepted,
  holdTaskPrice,
  isTaskChannelUsable,
  isTaskId,
  pickTaskChannel,
  postJson,
  recordTaskCall,
  settleTaskCharge,
  storableJson,
  storableText,
  taskPriceOf,
} from '../charge.ts';
import { failAndRefund } from '../finish.ts';
import { RefundReason, SubmitOutcome, taskMetricsOf } from '../metrics.ts';
import { pollRows } from '../poll-rows.ts';
import type { PollReport, PollSettings, TaskProvider } from '../provider.ts';
import {
  clientCodeOf,
  filterSubmitBody,
  initialStateOf,
  isAccepted,
  MJ_MODES,
  MJ_SUBMIT_KINDS,
  MJ_SWAP_FACE,
  MjCode,
  type MjSubmitKind,
  type MjTask,
  planSubmit,
  readSubmitAnswer,
  readTask,
  readUploadAnswer,
  refusalStatusOf,
  statusOf,
} from './wire.ts';

const CHANNEL_TYPES = [ProviderTypeId.MidjourneyProxy, ProviderTypeId.MidjourneyProxyPlus] as const;
const SUBMIT_TIMEOUT_MS = 60_000;
const SEED_TIMEOUT_MS = 30_000;
const POLL_TIMEOUT_MS = 15_000;

/** A refusal in Midjourney-Proxy's answer shape (`code` 4: validation, 30: rate limited, else the HTTP status). */
function refuse(reply: FastifyReply, status: number, description: string, type = 'turnpike_error') {
  const code = status === 400 ? MjCode.Validation : status === 429 ? MjCode.Saturated : status;
  return reply.code(status).send({ code, description, type });
}

/**
 * Code 3: the proxy has no account instance left to draw with, so every submit to it will fail alike. As the
 * reference does (when automatic disable is on and the channel's auto-ban is set), the channel is switched off:
 * at once in this process, then stored as auto-disabled (status 3) with the reason and announced to every process
 * (the chat path's disable, channel-health.ts). The client still gets the proxy's answer.
 */
function disableWithoutAccount(ctx: RelayContext, channel: RelayChannel): void {
  if (!ctx.deps.options.get('AutomaticDisableChannelEnabled') || !channel.autoBan) return;
  // Submits in flight together may all hear code 3: the first switches the channel off, once.
  if (channel.status !== ChannelStatus.Enabled) return;
  const reason = 'the Midjourney proxy has no available account instance (code 3)';
  ctx.channels.markDisabled(channel.id);
  ctx.log.warn({ channelId: channel.id, reason }, 'channel disabled automatically');
  void disableInDatabase(ctx, channel.id, reason).catch((err: unknown) =>
    ctx.log.error({ err, channelId: channel.id }, 'could not store the automatic disable of a channel'),
  );
}

/** A stored drawing as a task object, the image link pointing at the gateway with MjForwardUrlEnabled. */
export function toMjTask(ctx: RelayContext, row: Midjourney): MjTask {
  const forward = ctx.deps.options.get('MjForwardUrlEnabled');
  const imageUrl =
    forward && row.imageUrl !== ''
      ? `${ctx.deps.options.get('ServerAddress')}/mj/image/${encodeURIComponent(row.mjId)}`
      : row.imageUrl;
  const parse = (text: string, fallback: unknown) => {
    try {
      return text === '' ? fallback : (JSON.parse(text) as unknown);
    } catch {
      return fallback;
    }
  };
  const properties = parse(row.properties, {}) as Record<string, unknown>;
  const { videoUrl, videoUrls, ...rest } = properties;
  return {
    id: row.mjId,
    action: row.action,
    prompt: row.prompt,
    promptEn: row.promptEn,
    description: row.description,
    state: row.state,
    submitTime: row.submitTime,
    startTime: row.startTime,
    finishTime: row.finishTime,
    imageUrl,
    status: row.status,
    progress: row.progress,
    failReason: row.failReason,
    buttons: parse(row.buttons, []) as unknown[],
    properties: rest,
    ...(typeof videoUrl === 'string' ? { videoUrl } : {}),
    ...(Array.isArray(videoUrls) ? { videoUrls } : {}),
  };
}

/** The columns an upstream task object sets on the stored row. */
function fieldsOf(task: MjTask): Partial<Midjourney> {
  const fields: Partial<Midjourney> = {};
  if (typeof task.progress === 'string') fields.progress = storableText(task.progress).slice(0, 30);
  if (typeof task.imageUrl === 'string') fields.imageUrl = storableText(task.imageUrl);
  if (typeof task.promptEn === 'string') fields.promptEn = storableText(task.promptEn);
  if (typeof task.description === 'string') fields.description = storableText(task.description);
  if (typeof task.state === 'string') fields.state = storableText(task.state);
  if (typeof task.startTime === 'number') fields.startTime = task.startTime;
  if (typeof task.finishTime === 'number') fields.finishTime = task.finishTime;
  if (Array.isArray(task.buttons)) fields.buttons = JSON.stringify(task.buttons);
  if (typeof task.failReason === 'string') fields.failReason = storableText(task.failReason);
  // A Plus video's URLs have no column of their own: they are kept beside the task's properties.
  const video: Record<string, unknown> = {};
  if (typeof task.videoUrl === 'string' && task.videoUrl !== '') video.videoUrl = storableText(task.videoUrl);
  if (Array.isArray(task.videoUrls)) video.videoUrls = storableJson(task.videoUrls);
  const properties = task.properties && typeof task.properties === 'object' ? task.properties : undefined;
  if (properties || Object.keys(video).length > 0)
    fields.properties = storableText(JSON.stringify({ ...properties, ...video }));
  return fields;
}

/**
 * Stores what the proxy reports about one task: progress and fields while it runs, its end once (a FAILURE goes
 * through failAndRefund). Returns what changed.
 */
export async function applyMjTask(
  ctx: RelayContext,
  row: Midjourney,
  task: MjTask,
  now: number,
): Promise<{ updated: boolean; refunded: number; failed: boolean }> {
  const status = statusOf(task.status);
  const fields = fieldsOf(task);
  if (status === TaskStatus.Failure) {
    const refunded = await failAndRefund(ctx.deps.db, ctx.deps.bus, {
      kind: 'drawing',
      id: row.id,
      reason: storableText(task.failReason || '') || 'the drawing failed upstream',
      now: task.finishTime || now,
      fields: { ...fields, progress: undefined, failReason: undefined },
    });
    taskMetricsOf(ctx).recordRefund('midjourney', RefundReason.Failure, refunded);
    return { updated: true, refunded, failed: true };
  }
  const next: Partial<Midjourney> = { ...fields, status };
  if (status === TaskStatus.Success) {
    next.progress = '100%';
    if (!next.finishTime) next.finishTime = now;
  }
  const changed = await ctx.deps.db
    .update(midjourneys)
    .set(next)
    .where(and(eq(midjourneys.id, row.id), notInArray(midjourneys.status, [...FINISHED_TASK_STATUSES])))
    .returning({ id: midjourneys.id });
  return { updated: changed.length > 0, refunded: 0, failed: false };
}

/** Asks the proxy of a channel about these tasks (`POST /mj/task/list-by-condition`). */
async function fetchFromChannel(ctx: RelayContext, channelId: number, ids: string[]): Promise<MjTask[]> {
  const channel = ctx.channels.get(channelId);
  if (!channel?.key) throw new Error(`channel ${channelId} is unknown or has no key`);
  const answer = await postJson(
    `${baseOf(channel)}/mj/task/list-by-condition`,
    { 'mj-api-secret': channel.key },
    { ids },
    POLL_TIMEOUT_MS,
    ctx.upstream.dispatcherFor(channel.proxy),
  );
  if (answer.status !== 200 || !Array.isArray(answer.body))
    throw new Error(`list-by-condition answered ${answer.status}`);
  return answer.body.map(readTask).filter((task): task is MjTask => task !== undefined);
}

async function pollDrawings(ctx: RelayContext, settings: PollSettings): Promise<PollReport> {
  const { db } = ctx.deps;
  const rows = await db
    .select()
    .from(midjourneys)
    .where(notInArray(midjourneys.status, [...FINISHED_TASK_STATUSES]))
    .orderBy(asc(midjourneys.id))
    .limit(settings.batch);
  return pollRows(ctx, settings, {
    kind: 'drawing',
    label: 'drawing',
    provider: 'midjourney',
    rows,
    idOf: (row) => row.id,
    upstreamIdOf: (row) => row.mjId,
    channelOf: (row) => row.channelId,
    submittedAtOf: (row) => row.submitTime,
    fetch: (channelId, ids) => fetchFromChannel(ctx, channelId, ids),
    remoteIdOf: (task) => task.id,
    apply: (row, task) => applyMjTask(ctx, row, task, settings.now),
  });
}

async function findOwn(ctx: RelayContext, userId: number, mjId: string): Promise<Midjourney | undefined> {
  if (!isTaskId(mjId)) return undefined;
  const [row] = await ctx.deps.db
    .select()
    .from(midjourneys)
    .where(and(eq(midjourneys.userId, userId), eq(midjourneys.mjId, mjId)))
    .limit(1);
  return row;
}

/** The mode prefix of a request (`/mj-fast/mj/...`), or '' for `/mj/...`. */
function modeOf(request: FastifyRequest): string {
  const first = request.url.split('/')[1] ?? '';
  return (MJ_MODES as readonly string[]).includes(first) ? `/${first}` : '';
}

async function submit(ctx: RelayContext, kind: MjSubmitKind, request: FastifyRequest, reply: FastifyReply) {
  const startedAt = performance.now();
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(reply, auth.error.status, auth.error.message);
  const { caller } = auth;
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return refuse(reply, 400, 'the request body must be a JSON object');
  const planned = planSubmit(kind, body as Record<string, unknown>);
  if (!planned.ok) return refuse(reply, 400, planned.description);
  const { plan } = planned;
  const { options } = ctx.deps;
  const count = (outcome: SubmitOutcome) =>
    taskMetricsOf(ctx).recordSubmit('midjourney', plan.action, outcome);
  const reject = (status: number, description: string) => {
    count(SubmitOutcome.Rejected);
    return refuse(reply, status, description);
  };
  const notAllowed = checkModelAllowed(caller, plan.model);
  if (notAllowed) return reject(notAllowed.status, notAllowed.message);

  let channel = undefined as ReturnType<typeof ctx.channels.get>;
  if (plan.originId !== undefined) {
    const origin = await findOwn(ctx, caller.user.id, plan.originId);
    if (!origin) return reject(400, `task ${plan.originId} not found`);
    if (
      options.get('MjActionCheckSuccessEnabled') &&
      plan.action !== 'MODAL' &&
      origin.status !== TaskStatus.Success
    )
      return reject(400, `task ${plan.originId} has not succeeded (status ${origin.status || 'unknown'})`);
    channel = ctx.channels.get(origin.channelId);
    if (!isTaskChannelUsable(ctx, channel, CHANNEL_TYPES))
      return reject(503, `the channel of task ${plan.originId} is not available`);
  } else {
    const picked = pickTaskChannel(ctx, caller, plan.model, CHANNEL_TYPES);
    if (!('id' in picked)) return reject(picked.status, picked.message);
    channel = picked;
  }
  if (!channel?.key) return reject(503, 'no channel is available');

  const price = taskPriceOf(ctx, plan.model, caller.group);
  const quota = plan.isFree ? 0 : price.quota;
  const held = await holdTaskPrice(ctx, caller, quota);
  if (!held.ok) return reject(held.error.status, held.error.message);
  const charge = {
    caller,
    hold: held.hold,
    quota,
    model: plan.model,
    modelPrice: price.modelPrice,
    groupRatio: price.groupRatio,
    channelId: channel.id,
    startedAt,
  };
  const sent = filterSubmitBody(body as Record<string, unknown>, {
    notify: options.get('MjNotifyEnabled'),
    accountFilter: options.get('MjAccountFilterEnabled'),
    modeClear: options.get('MjModeClearEnabled'),
  });
  let upstream: { status: number; body: unknown };
  const sentAt = performance.now();
  try {
    upstream = await postJson(
      `${baseOf(channel)}${modeOf(request)}/mj/${kind === MJ_SWAP_FACE ? kind : `submit/${kind}`}`,
      { 'mj-api-secret': channel.key },
      sent,
      SUBMIT_TIMEOUT_MS,
      ctx.upstream.dispatcherFor(channel.proxy),
    );
  } catch (err) {
    await settleTaskCharge(ctx, request, charge, false);
    count(SubmitOutcome.Error);
    request.log.warn({ err, channelId: channel.id }, 'midjourney submit failed');
    return refuse(reply, 502, 'the Midjourney upstream did not answer', 'upstream_error');
  }
  const upstreamMs = () => performance.now() - sentAt;

  // An upload answers the images' URLs at once: no task follows, and nothing can fail later to be refunded.
  const upload = plan.action === 'UPLOAD' ? readUploadAnswer(upstream.body) : undefined;
  const answer = readSubmitAnswer(upstream.body);
  const accepted =
    upstream.status === 200 &&
    (upload
      ? upload.code === MjCode.Success && upload.result.length > 0
      : answer !== undefined &&
        isAccepted(answer.code) &&
        answer.result !== undefined &&
        answer.result !== '');
  if (!accepted || !answer) {
    await settleTaskCharge(ctx, request, charge, false);
    const status = answer ? refusalStatusOf(upstream.status, answer.code) : 502;
    recordTaskCall(ctx, request, charge, {
      status,
      quota: 0,
      upstreamMs: upstreamMs(),
      provider: 'midjourney',
    });
    if (answer?.code === MjCode.NoAccount) disableWithoutAccount(ctx, channel);
    // An accepting code without a task id is no answer the gateway can bill or follow.
    const readable = answer !== undefined && !(upstream.status === 200 && isAccepted(answer.code));
    count(readable ? SubmitOutcome.Refused : SubmitOutcome.Error);
    if (!readable)
      return refuse(reply, 502, `the Midjourney upstream answered ${upstream.status}`, 'upstream_error');
    if (status === 429)
      return reply.code(429).send({
        code: MjCode.Saturated,
        description: answer.description || 'the Midjourney upstream is saturated; try again later',
        type: 'upstream_error',
      });
    return reply.code(status).send(answer);
  }

  // The task is stored before it is charged: a charge never exists without the task that can refund it.
  const now = Date.now();
  const prompt = typeof sent.prompt === 'string' ? storableText(sent.prompt) : '';
  const state = upload
    ? { status: TaskStatus.Success, imageUrl: '', finished: true }
    : initialStateOf(answer.code, answer.properties);
  const properties = upload ? { urls: upload.result } : answer.properties;
  try {
    await ctx.deps.db.insert(midjourneys).values({
      code: clientCodeOf(plan.action, answer.code),
      userId: caller.user.id,
      tokenId: caller.token.id,
      action: plan.action,
      mjId: upload ? '' : storableText(answer.result ?? '').slice(0, 191),
      prompt,
      description: storableText(answer.description),
      submitTime: now,
      startTime: state.finished ? now : 0,
      finishTime: state.finished ? now : 0,
      imageUrl: storableText(state.imageUrl),
      status: state.status,
      progress: state.finished ? '100%' : '0%',
      channelId: channel.id,
      quota,
      properties: properties ? storableText(JSON.stringify(properties)) : '',
    });
  } catch (err) {
    await settleTaskCharge(ctx, request, charge, false);
    count(SubmitOutcome.Error);
    request.log.error({ err, channelId: channel.id }, 'could not store a drawing task');
    return refuse(reply, 500, 'the task could not be stored; it was not charged');
  }
  await chargeAccepted(ctx, request, charge, { upstreamMs: upstreamMs(), provider: 'midjourney' });
  count(SubmitOutcome.Accepted);
  if (upload) return reply.send(upload);
  return reply.send({ ...answer, code: clientCodeOf(plan.action, answer.code) });
}

async function fetchOne(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const own = await ownTaskOf(ctx, request, reply);
  return 'row' in own ? reply.send(toMjTask(ctx, own.row)) : own.refused;
}

/** The caller's own drawing the path names, or the refusal already sent (no key, or no such drawing of theirs). */
async function ownTaskOf(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
): Promise<{ readonly row: Midjourney } | { readonly refused: FastifyReply }> {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return { refused: refuse(reply, auth.error.status, auth.error.message) };
  const row = await findOwn(ctx, auth.caller.user.id, request.params.id);
  return row ? { row } : { refused: refuse(reply, 404, `task ${request.params.id} not found`) };
}

async function listByCondition(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(reply, auth.error.status, auth.error.message);
  const ids = (request.body as { ids?: unknown } | undefined)?.ids;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
    return refuse(reply, 400, 'ids must be a list of task ids');
  const wanted = ids.filter(isTaskId).slice(0, 500);
  if (wanted.length === 0) return reply.send([]);
  const rows = await ctx.deps.db
    .select()
    .from(midjourneys)
    .where(and(eq(midjourneys.userId, auth.caller.user.id), inArray(midjourneys.mjId, wanted)))
    .orderBy(asc(midjourneys.id));
  return reply.send(rows.map((row) => toMjTask(ctx, row)));
}

async function imageSeed(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const own = await ownTaskOf(ctx, request, reply);
  if (!('row' in own)) return own.refused;
  const { row } = own;
  const channel = ctx.channels.get(row.channelId);
  if (!channel?.key) return refuse(reply, 503, 'the channel of this task is not available');
  try {
    const response = await fetch(`${baseOf(channel)}/mj/task/${encodeURIComponent(row.mjId)}/image-seed`, {
      headers: { 'mj-api-secret': channel.key },
      signal: AbortSignal.timeout(SEED_TIMEOUT_MS),
      dispatcher: ctx.upstream.dispatcherFor(channel.proxy),
    });
    const answer = readSubmitAnswer(await response.json().catch(() => undefined));
    if (!answer)
      return refuse(reply, 502, `the Midjourney upstream answered ${response.status}`, 'upstream_error');
    return reply.code(response.status === 200 ? 200 : 400).send(answer);
  } catch (err) {
    request.log.warn({ err, channelId: channel.id }, 'midjourney image seed failed');
    return refuse(reply, 502, 'the Midjourney upstream did not answer', 'upstream_error');
  }
}

/** `GET /mj/image/{id}`: the stored result image, fetched from where the proxy put it (no key needed, as links). */
async function image(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  if (!ctx.deps.options.get('MjForwardUrlEnabled')) return refuse(reply, 404, 'image forwarding is off');
  if (!isTaskId(request.params.id)) return refuse(reply, 404, 'no image for this task');
  const [row] = await ctx.deps.db
    .select({ imageUrl: midjourneys.imageUrl, channelId: midjourneys.channelId })
    .from(midjourneys)
    .where(eq(midjourneys.mjId, request.params.id))
    .limit(1);
  if (!row?.imageUrl || !/^https?:\/\//.test(row.imageUrl))
    return refuse(reply, 404, 'no image for this task');
  let response: Response;
  try {
    response = await fetch(row.imageUrl, {
      signal: AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
      dispatcher: ctx.upstream.dispatcherFor(ctx.channels.get(row.channelId)?.proxy),
    });
  } catch (err) {
    request.log.warn({ err }, 'midjourney image could not be fetched');
    return refuse(reply, 502, 'the image could not be fetched', 'upstream_error');
  }
  if (!response.ok || !response.body) return refuse(reply, 502, `the image host answered ${response.status}`);
  reply.header('content-type', response.headers.get('content-type') ?? 'application/octet-stream');
  const length = response.headers.get('content-length');
  if (length) reply.header('content-length', length);
  return reply.send(Buffer.from(await response.arrayBuffer()));
}

/**
 * `POST /mj/notify`: the proxy's callback. It is taken as a hint, never as the truth: the task named is read again
 * from its channel, so a forged callback cannot finish (or refund) anything.
 */
async function notify(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  if (!ctx.deps.options.get('MjNotifyEnabled')) return refuse(reply, 403, 'callbacks are not enabled');
  const task = readTask(request.body);
  if (!task || !isTaskId(task.id)) return refuse(reply, 400, 'the callback must be a task object with an id');
  const [row] = await ctx.deps.db.select().from(midjourneys).where(eq(midjourneys.mjId, task.id)).limit(1);
  if (!row || isTaskFinished(row.status)) return reply.send({ code: MjCode.Success, description: 'ok' });
  try {
    const [current] = await fetchFromChannel(ctx, row.channelId, [row.mjId]);
    if (current) await applyMjTask(ctx, row, current, Date.now());
  } catch (err) {
    request.log.warn({ err, channelId: row.channelId }, 'could not read a notified drawing task');
  }
  return reply.send({ code: MjCode.Success, description: 'ok' });
}

export const midjourneyProvider: TaskProvider = {
  id: 'midjourney',
  carries: 'drawing',
  channelTypes: CHANNEL_TYPES,
  register(app: FastifyInstance, ctx: RelayContext) {
    for (const prefix of ['', ...MJ_MODES.map((mode) => `/${mode}`)]) {
      for (const kind of MJ_SUBMIT_KINDS)
        app.post(`${prefix}/mj/submit/${kind}`, (request, reply) => submit(ctx, kind, request, reply));
      app.post(`${prefix}/mj/${MJ_SWAP_FACE}`, (request, reply) => submit(ctx, MJ_SWAP_FACE, request, reply));
      app.get<{ Params: { id: string } }>(`${prefix}/mj/task/:id/fetch`, (request, reply) =>
        fetchOne(ctx, request, reply),
      );
      app.get<{ Params: { id: string } }>(`${prefix}/mj/task/:id/image-seed`, (request, reply) =>
        imageSeed(ctx, request, reply),
      );
      app.post(`${prefix}/mj/task/list-by-condition`, (request, reply) =>
        listByCondition(ctx, request, reply),
      );
      app.get<{ Params: { id: string } }>(`${prefix}/mj/image/:id`, (request, reply) =>
        image(ctx, request, reply),
      );
      app.post(`${prefix}/mj/notify`, (request, reply) => notify(ctx, request, reply));
    }
  },
  poll: pollDrawings,
};

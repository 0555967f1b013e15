/**
 * Suno music and lyrics through Suno API channels (type 36; https://github.com/Suno-API/Suno-API):
 * `POST /suno/submit/{music,lyrics}`, `GET /suno/fetch/{id}`, `POST /suno/fetch`. Reads answer from the
 * database; submits are billed (`suno_<action>`) when the upstream accepts them and refunded once on failure.
 */
import type { Task } from '@turnpike/core/db/schema/index';
import { tasks } from '@turnpike/core/db/schema/index';
import { FINISHED_TASK_STATUSES, TaskPlatform, TaskStatus } from '@turnpike/core/domain/tasks';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, asc, eq, inArray, notInArray } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkModelAllowed } from '../../pipeline/authenticate.ts';
import type { RelayContext } from '../../pipeline/context.ts';
import { pickChannel } from '../../routing/pick.ts';
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
  acceptedTaskId,
  readFetchAnswer,
  SUNO_ACTIONS,
  type SunoAction,
  type SunoTask,
  sunoStatusOf,
} from './wire.ts';

const CHANNEL_TYPES = [ProviderTypeId.Suno] as const;
const SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;

/** A refusal in Suno-API's envelope: `{ code, message, data: null }`. */
/** Worth another channel (reference: Suno's own retry rule). */
const isRetryable = (status: number): boolean =>
  status === 429 || status === 307 || (status >= 500 && status !== 504 && status !== 524);

function refuse(reply: FastifyReply, status: number, code: string | number | null, message: string) {
  return reply.code(status).send({ code: String(code ?? 'error'), message, data: null });
}

export function toSunoTask(row: Task): SunoTask {
  return {
    task_id: row.taskId,
    action: row.action,
    status: row.status,
    fail_reason: row.failReason,
    submit_time: row.submitTime,
    start_time: row.startTime,
    finish_time: row.finishTime,
    progress: row.progress,
    data: row.data ?? null,
  };
}

export async function applySunoTask(
  ctx: RelayContext,
  row: Task,
  task: SunoTask,
  nowMs: number,
): Promise<{ updated: boolean; refunded: number }> {
  const status = sunoStatusOf(task.status);
  const fields: Partial<Task> = {};
  if (typeof task.progress === 'string') fields.progress = storableText(task.progress).slice(0, 20);
  if (typeof task.start_time === 'number') fields.startTime = task.start_time;
  if (typeof task.finish_time === 'number') fields.finishTime = task.finish_time;
  if (task.data !== undefined) fields.data = storableJson(task.data);
  if (status === TaskStatus.Failure) {
    const refunded = await failAndRefund(ctx.deps.db, ctx.deps.bus, {
      kind: 'creative',
      id: row.id,
      reason: storableText(task.fail_reason || '') || 'the task failed upstream',
      now: nowMs,
      fields: { data: fields.data, startTime: fields.startTime },
    });
    taskMetricsOf(ctx).recordRefund('suno', RefundReason.Failure, refunded);
    return { updated: true, refunded };
  }
  const now = Math.floor(nowMs / 1000);
  const next: Partial<Task> = { ...fields, status, updatedAt: now };
  if (status === TaskStatus.Success) {
    next.progress = '100%';
    if (!next.finishTime) next.finishTime = now;
  }
  const changed = await ctx.deps.db
    .update(tasks)
    .set(next)
    .where(and(eq(tasks.id, row.id), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
    .returning({ id: tasks.id });
  return { updated: changed.length > 0, refunded: 0 };
}

async function fetchFromChannel(ctx: RelayContext, channelId: number, ids: string[]): Promise<SunoTask[]> {
  const channel = ctx.channels.get(channelId);
  if (!channel?.key) throw new Error(`channel ${channelId} is unknown or has no key`);
  const answer = await postJson(
    `${baseOf(channel)}/suno/fetch`,
    { authorization: `Bearer ${channel.key}` },
    { ids, action: '' },
    POLL_TIMEOUT_MS,
    ctx.upstream.dispatcherFor(channel.proxy),
  );
  const found = answer.status === 200 ? readFetchAnswer(answer.body) : undefined;
  if (!found) throw new Error(`suno fetch answered ${answer.status}`);
  return found;
}

async function pollSuno(ctx: RelayContext, settings: PollSettings): Promise<PollReport> {
  const rows = await ctx.deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.platform, TaskPlatform.Suno), notInArray(tasks.status, [...FINISHED_TASK_STATUSES])))
    .orderBy(asc(tasks.id))
    .limit(settings.batch);
  return pollRows(ctx, settings, {
    kind: 'creative',
    label: 'suno',
    provider: 'suno',
    rows,
    idOf: (row) => row.id,
    upstreamIdOf: (row) => row.taskId,
    channelOf: (row) => row.channelId,
    // Suno rows keep Unix seconds.
    submittedAtOf: (row) => row.submitTime * 1000,
    fetch: (channelId, ids) => fetchFromChannel(ctx, channelId, ids),
    remoteIdOf: (task) => task.task_id,
    apply: (row, task) => applySunoTask(ctx, row, task, settings.now),
  });
}

async function submit(ctx: RelayContext, action: SunoAction, request: FastifyRequest, reply: FastifyReply) {
  const startedAt = performance.now();
  const auth = await authenticateTaskRequest(ctx, request);
  if (!auth.ok) return refuse(reply, auth.error.status, auth.error.code, auth.error.message);
  const { caller } = auth;
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return refuse(reply, 400, 'invalid_request', 'the request body must be a JSON object');
  const input = body as Record<string, unknown>;
  const model = `suno_${action}`;
  const count = (outcome: SubmitOutcome) =>
    taskMetricsOf(ctx).recordSubmit('suno', action.toUpperCase(), outcome);
  const notAllowed = checkModelAllowed(caller, model);
  if (notAllowed) return refuse(reply, notAllowed.status, notAllowed.code, notAllowed.message);
  let channel: RelayChannel | undefined;
  // A continuation goes to the channel of the task it continues (reference §9.4).
  const origin = typeof input.task_id === 'string' && input.task_id !== '' ? input.task_id : undefined;
  if (origin !== undefined) {
    if (!isTaskId(origin)) return refuse(reply, 400, 'task_not_exist', 'task_id is not a task id');
    const [row] = await ctx.deps.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.userId, caller.user.id), eq(tasks.taskId, origin)))
      .limit(1);
    if (!row) return refuse(reply, 400, 'task_not_exist', `task ${origin} not found`);
    channel = ctx.channels.get(row.channelId);
    if (!isTaskChannelUsable(ctx, channel, CHANNEL_TYPES)) {
      count(SubmitOutcome.Rejected);
      return refuse(reply, 503, 'channel_unavailable', `the channel of task ${origin} is not available`);
    }
  } else {
    const picked = pickTaskChannel(ctx, caller, model, CHANNEL_TYPES);
    if (!('id' in picked)) {
      count(SubmitOutcome.Rejected);
      return refuse(reply, picked.status, picked.code, picked.message);
    }
    channel = picked;
  }
  if (!channel?.key) {
    count(SubmitOutcome.Rejected);
    return refuse(reply, 503, 'channel_unavailable', 'no channel is available');
  }
  const price = taskPriceOf(ctx, model, caller.group);
  const held = await holdTaskPrice(ctx, caller, price.quota);
  if (!held.ok) {
    count(SubmitOutcome.Rejected);
    return refuse(reply, held.error.status, held.error.code, held.error.message);
  }
  // A new task may be retried on the next channel (RetryTimes) when the upstream is busy or failing, as in the
  // reference: 429, 307 and 5xx except 504/524, or no answer. A continuation stays on its task's channel.
  const retries =
    origin === undefined && caller.forcedChannelId === undefined ? ctx.deps.options.get('RetryTimes') : 0;
  const tried = new Set<number>();
  let upstream: { status: number; body: unknown } | undefined;
  let sentAt = performance.now();
  for (let attempt = 0; ; attempt++) {
    tried.add(channel.id);
    sentAt = performance.now();
    try {
      upstream = await postJson(
        `${baseOf(channel)}/suno/submit/${action}`,
        { authorization: `Bearer ${channel.key}` },
        input,
        SUBMIT_TIMEOUT_MS,
        ctx.upstream.dispatcherFor(channel.proxy),
      );
    } catch (err) {
      upstream = undefined;
      request.log.warn({ err, channelId: channel.id }, 'suno submit failed');
    }
    if (attempt >= retries || (upstream !== undefined && !isRetryable(upstream.status))) break;
    const next = pickChannel(ctx.channels.table, {
      group: caller.group,
      model,
      attempt: attempt + 1,
      tried,
      isAvailable: (id) => isTaskChannelUsable(ctx, ctx.channels.get(id), CHANNEL_TYPES),
    });
    const nextChannel = next && ctx.channels.get(next.channelId);
    if (!nextChannel?.key) break;
    channel = nextChannel;
  }
  const charge = { caller, hold: held.hold, model, channelId: channel.id, startedAt, ...price };
  if (upstream === undefined) {
    await settleTaskCharge(ctx, request, charge, false);
    count(SubmitOutcome.Error);
    return refuse(reply, 502, 'upstream_error', 'the Suno upstream did not answer');
  }
  const taskId = acceptedTaskId(upstream.status, upstream.body);
  if (!taskId) {
    await settleTaskCharge(ctx, request, charge, false);
    const said = upstream.body as { code?: unknown; message?: unknown } | undefined;
    const status = upstream.status >= 400 ? upstream.status : 502;
    const upstreamMs = performance.now() - sentAt;
    recordTaskCall(ctx, request, charge, { status, quota: 0, upstreamMs, provider: 'suno' });
    count(SubmitOutcome.Refused);
    return refuse(
      reply,
      status,
      typeof said?.code === 'string' ? said.code : 'upstream_error',
      typeof said?.message === 'string' && said.message !== ''
        ? said.message
        : `the Suno upstream answered ${upstream.status}`,
    );
  }
  // The task is stored before it is charged: a charge never exists without the task that can refund it.
  const now = Math.floor(Date.now() / 1000);
  try {
    await ctx.deps.db.insert(tasks).values({
      createdAt: now,
      updatedAt: now,
      taskId: storableText(taskId).slice(0, 191),
      platform: TaskPlatform.Suno,
      userId: caller.user.id,
      tokenId: caller.token.id,
      channelId: channel.id,
      quota: price.quota,
      action: action.toUpperCase(),
      status: TaskStatus.Submitted,
      submitTime: now,
      progress: '0%',
      properties: { input: storableJson(input.prompt ?? input.gpt_description_prompt ?? '') },
    });
  } catch (err) {
    await settleTaskCharge(ctx, request, charge, false);
    request.log.error({ err, channelId: channel.id }, 'could not store a suno task');
    count(SubmitOutcome.Error);
    return refuse(reply, 500, 'internal_error', 'the task could not be stored; it was not charged');
  }
  await chargeAccepted(ctx, request, charge, { upstreamMs: performance.now() - sentAt, provider: 'suno' });
  count(SubmitOutcome.Accepted);
  return reply.send({ code: 'success', message: '', data: taskId });
}

async function ownTasks(ctx: RelayContext, userId: number, ids: string[]): Promise<Task[]> {
  const wanted = ids.filter(isTaskId);
  if (wanted.length === 0) return [];
  return ctx.deps.db
    .select()
    .from(tasks)
    .where(
      and(eq(tasks.userId, userId), eq(tasks.platform, TaskPlatform.Suno), inArray(tasks.taskId, wanted)),
    )
    .orderBy(asc(tasks.id));
}

export const sunoProvider: TaskProvider = {
  id: 'suno',
  carries: 'music',
  channelTypes: CHANNEL_TYPES,
  register(app: FastifyInstance, ctx: RelayContext) {
    for (const action of SUNO_ACTIONS)
      app.post(`/suno/submit/${action}`, (request, reply) => submit(ctx, action, request, reply));
    app.get<{ Params: { id: string } }>('/suno/fetch/:id', async (request, reply) => {
      const auth = await authenticateTaskRequest(ctx, request);
      if (!auth.ok) return refuse(reply, auth.error.status, auth.error.code, auth.error.message);
      const [row] = await ownTasks(ctx, auth.caller.user.id, [request.params.id]);
      if (!row) return refuse(reply, 404, 'task_not_exist', `task ${request.params.id} not found`);
      return reply.send({ code: 'success', message: '', data: toSunoTask(row) });
    });
    app.post('/suno/fetch', async (request, reply) => {
      const auth = await authenticateTaskRequest(ctx, request);
      if (!auth.ok) return refuse(reply, auth.error.status, auth.error.code, auth.error.message);
      const ids = (request.body as { ids?: unknown } | undefined)?.ids;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
        return refuse(reply, 400, 'invalid_request', 'ids must be a list of task ids');
      const rows = await ownTasks(ctx, auth.caller.user.id, ids.slice(0, 500));
      return reply.send({ code: 'success', message: '', data: rows.map(toSunoTask) });
    });
  },
  poll: pollSuno,
};

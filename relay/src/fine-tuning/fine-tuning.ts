/**
 * OpenAI's fine-tuning jobs (https://platform.openai.com/docs/api-reference/fine-tuning): create, list, retrieve,
 * cancel, events and checkpoints, passed through to OpenAI and Azure OpenAI channels (the same paths under
 * `/openai…?api-version=` on Azure). The training and validation files are the gateway's own (files/), uploaded to
 * the channel as `fine-tune` files when the job is created. A job is the token's user's: another user's is a 404.
 *
 * Money: the provider's training price (core/src/billing/training-prices.ts) × the group ratio, per training token.
 * The estimate (the file's counted tokens × the epochs asked for, 10 for `auto`) is taken with the job's row; when
 * the job ends its `trained_tokens` are billed (at most the estimate) and the rest given back, once.
 */
import { randomBytes } from 'node:crypto';
import { lookupGroupRatio } from '@turnpike/core/billing/ratios';
import { trainingPriceOf } from '@turnpike/core/billing/training-prices';
import { type FineTuningJob, fineTuningJobs, logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { isRecord } from '@turnpike/core/json';
import { priceTablesOf } from '@turnpike/core/options/price-tables';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, desc, eq, lt } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { giveBackRest, publishChanged, takeHeld } from '../batches/books.ts';
import { fileForm, openAiHeadersOf, openAiUrlOf } from '../batches/openai-batch-api.ts';
import { callUpstream, jsonOf, UpstreamCallError } from '../batches/upstream.ts';
import { localError } from '../errors.ts';
import {
  callerOf,
  fileStoreOf,
  invalidRequest,
  isGatewayId,
  listLimitOf,
  notFound,
  openAiPage,
  ownFile,
} from '../files/files.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { type CountableMessage, countChatPromptTokens } from '../metering/tokens.ts';
import { checkModelAllowed } from '../pipeline/authenticate.ts';
import { holdQuota } from '../pipeline/billing.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { sendError } from '../pipeline/respond.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { payerOf, pickTaskChannel } from '../tasks/charge.ts';

const FINE_TUNING_TYPES: readonly number[] = [ProviderTypeId.OpenAI, ProviderTypeId.Azure];
const FINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Epochs held for when the job leaves them to the provider (`auto`). */
const AUTO_EPOCHS_HELD = 10;

const newJobId = () => `ftjob-${randomBytes(12).toString('hex')}`;
const jobIdOf = (request: FastifyRequest) => (request.params as { id: string }).id;

/** Training tokens of one pass over a file: each line's messages counted as a chat prompt. */
function fileTokens(model: string, content: Buffer): number {
  let total = 0;
  for (const raw of content.toString('utf8').split('\n')) {
    if (raw.trim() === '') continue;
    const line = jsonOf(raw);
    total += Array.isArray(line.messages)
      ? countChatPromptTokens(model, line.messages as CountableMessage[])
      : Math.ceil(raw.length / 2);
  }
  return total;
}

function epochsOf(body: Record<string, unknown>): number {
  const direct = isRecord(body.hyperparameters) ? body.hyperparameters.n_epochs : undefined;
  const method = isRecord(body.method) ? body.method : {};
  const nested = Object.values(method)
    .filter(isRecord)
    .map((inner) => (isRecord(inner.hyperparameters) ? inner.hyperparameters.n_epochs : undefined))
    .find((value) => typeof value === 'number');
  const epochs = typeof direct === 'number' ? direct : nested;
  return typeof epochs === 'number' && Number.isInteger(epochs) && epochs > 0 ? epochs : AUTO_EPOCHS_HELD;
}

/** The job as the client sees it: the gateway's ids in place of the upstream's. */
function toClientJob(row: FineTuningJob) {
  const job = isRecord(row.job) ? row.job : {};
  return {
    ...job,
    object: 'fine_tuning.job',
    id: row.id,
    model: row.model,
    status: row.status,
    training_file: row.trainingFile,
    validation_file: row.validationFile ?? null,
    created_at: row.createdAt,
  };
}

async function ownJob(ctx: RelayContext, userId: number, id: string) {
  if (!isGatewayId(id)) return undefined;
  const [row] = await ctx.deps.db
    .select()
    .from(fineTuningJobs)
    .where(and(eq(fineTuningJobs.id, id), eq(fineTuningJobs.userId, userId)));
  return row;
}

async function uploadFile(ctx: RelayContext, channel: RelayChannel, userId: number, id: string) {
  const file = await ownFile(ctx, userId, id);
  const content = file && (await fileStoreOf(ctx).get(file.id));
  if (!file || !content) return undefined;
  const form = fileForm(content, file.filename, 'fine-tune');
  const answer = jsonOf(
    await callUpstream(
      ctx.upstream.dispatcherFor(channel.proxy),
      openAiUrlOf(channel, '/files'),
      {
        method: 'POST',
        headers: { ...openAiHeadersOf(channel), 'content-type': form.contentType },
        body: form.body,
      },
      'uploading a fine-tuning file',
    ),
  );
  if (typeof answer.id !== 'string') throw new Error('the upstream answered a file upload without an id');
  return answer.id;
}

async function createJob(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const body = isRecord(request.body) ? request.body : {};
  const { model, training_file: trainingId, validation_file: validationId } = body;
  if (typeof model !== 'string' || model === '')
    return sendError(
      request,
      reply,
      invalidRequest('model is required', 'missing_required_parameter', 'model'),
      openAiChatIngress,
    );
  if (typeof trainingId !== 'string')
    return sendError(
      request,
      reply,
      invalidRequest('training_file is required', 'missing_required_parameter', 'training_file'),
      openAiChatIngress,
    );
  const refused = checkModelAllowed(caller, model);
  if (refused) return sendError(request, reply, refused, openAiChatIngress);
  const training = await ownFile(ctx, caller.user.id, trainingId);
  const content = training && (await fileStoreOf(ctx).get(training.id));
  if (!training || !content)
    return sendError(request, reply, notFound('file', trainingId), openAiChatIngress);
  if (training.purpose !== 'fine-tune')
    return sendError(
      request,
      reply,
      invalidRequest('the training file must have the purpose "fine-tune"', 'invalid_value', 'training_file'),
      openAiChatIngress,
    );
  if (typeof validationId === 'string' && !(await ownFile(ctx, caller.user.id, validationId)))
    return sendError(request, reply, notFound('file', validationId), openAiChatIngress);
  const price = trainingPriceOf(model);
  if (price === undefined)
    return sendError(
      request,
      reply,
      invalidRequest(`${model} has no fine-tuning price on this gateway`, 'model_not_available', 'model'),
      openAiChatIngress,
    );
  const channel = pickTaskChannel(ctx, caller, model, FINE_TUNING_TYPES);
  if ('isLocal' in channel) return sendError(request, reply, channel, openAiChatIngress);
  const groupRatio = lookupGroupRatio(
    priceTablesOf((key) => ctx.deps.options.get(key)),
    caller.group,
  );
  const usdPerMillion = price * groupRatio;
  const quotaPerToken = (usdPerMillion / 1e6) * ctx.deps.options.get('QuotaPerUnit');
  const estimate = Math.ceil(fileTokens(model, content) * epochsOf(body) * quotaPerToken);
  const held = await holdQuota(ctx, payerOf(ctx, caller), estimate);
  if (!held.ok) return sendError(request, reply, held.error, openAiChatIngress);
  const owner = {
    userId: caller.user.id,
    tokenId: caller.token.id,
    tokenLimited: caller.token.unlimitedQuota ? 0 : 1,
    held: estimate,
  };
  const id = newJobId();
  const row = await takeHeld(ctx, held.hold, owner, async (tx) => {
    const [inserted] = await tx
      .insert(fineTuningJobs)
      .values({
        ...owner,
        id,
        channelId: channel.id,
        model,
        trainingFile: training.id,
        validationFile: typeof validationId === 'string' ? validationId : null,
        status: 'validating_files',
        usdPerMillion,
        username: caller.user.username,
        tokenName: caller.token.name,
        group: caller.group,
        createdAt: Math.floor(Date.now() / 1000),
      })
      .returning();
    if (!inserted) throw new Error('the fine-tuning job row was not written');
    return inserted;
  });
  try {
    const upstreamTraining = await uploadFile(ctx, channel, caller.user.id, training.id);
    const upstreamValidation =
      typeof validationId === 'string'
        ? await uploadFile(ctx, channel, caller.user.id, validationId)
        : undefined;
    const job = jsonOf(
      await callUpstream(
        ctx.upstream.dispatcherFor(channel.proxy),
        openAiUrlOf(channel, '/fine_tuning/jobs'),
        {
          method: 'POST',
          headers: { ...openAiHeadersOf(channel), 'content-type': 'application/json' },
          body: JSON.stringify({
            ...body,
            model: channel.modelMapping[model] ?? model,
            training_file: upstreamTraining,
            ...(upstreamValidation ? { validation_file: upstreamValidation } : {}),
          }),
        },
        'creating a fine-tuning job',
      ),
    );
    if (typeof job.id !== 'string') throw new Error('the upstream answered a fine-tuning job without an id');
    await ctx.deps.db
      .update(fineTuningJobs)
      .set({
        upstreamId: job.id,
        job,
        status: typeof job.status === 'string' ? job.status : 'validating_files',
      })
      .where(eq(fineTuningJobs.id, id));
  } catch (err) {
    request.log.warn({ err, jobId: id }, 'the upstream refused a fine-tuning job');
    await settleJob(ctx, id, { status: 'failed', trainedTokens: 0, job: row.job });
    const status = err instanceof UpstreamCallError && err.status < 500 ? 400 : 502;
    return sendError(
      request,
      reply,
      localError(
        status,
        'upstream_error',
        'the upstream did not accept the fine-tuning job; nothing was charged',
      ),
      openAiChatIngress,
    );
  }
  const [stored] = await ctx.deps.db.select().from(fineTuningJobs).where(eq(fineTuningJobs.id, id));
  return reply.send(toClientJob(stored ?? row));
}

/**
 * Ends a job once: its trained tokens billed (at most the hold) with a consume log, the rest given back; false when
 * it was settled before.
 */
async function settleJob(
  ctx: RelayContext,
  id: string,
  end: { status: string; trainedTokens: number; job: unknown },
): Promise<boolean> {
  const now = Math.floor(Date.now() / 1000);
  const done = await ctx.deps.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(fineTuningJobs)
      .where(and(eq(fineTuningJobs.id, id), eq(fineTuningJobs.settledAt, 0)))
      .for('update');
    if (!row) return undefined;
    const bill = Math.round(
      ((end.trainedTokens * Number(row.usdPerMillion)) / 1e6) * ctx.deps.options.get('QuotaPerUnit'),
    );
    const charged = Math.min(bill, row.held);
    if (charged > 0)
      await tx.insert(logs).values({
        userId: row.userId,
        createdAt: now,
        type: LogType.Consume,
        username: row.username,
        tokenName: row.tokenName,
        modelName: row.model,
        quota: charged,
        promptTokens: end.trainedTokens,
        completionTokens: 0,
        channelId: row.channelId,
        tokenId: row.tokenId,
        group: row.group,
        requestId: row.id,
        content: `fine-tuning job ${row.id}: ${end.trainedTokens} trained tokens`,
        other: JSON.stringify({
          fine_tuning_job: row.id,
          trained_tokens: end.trainedTokens,
          usd_per_million: row.usdPerMillion,
        }),
      });
    await giveBackRest(tx, row, { charged, refunded: row.held - charged, requests: charged > 0 ? 1 : 0 });
    await tx
      .update(fineTuningJobs)
      .set({ settledAt: now, charged, status: end.status, job: end.job })
      .where(eq(fineTuningJobs.id, id));
    return row;
  });
  if (!done) return false;
  await publishChanged(ctx.deps.bus, done.userId, done.tokenLimited === 1 ? done.tokenId : undefined);
  return true;
}

/** The job brought up to date from its channel, and settled when it ended. */
export async function refreshJob(ctx: RelayContext, row: FineTuningJob): Promise<FineTuningJob> {
  if (row.settledAt > 0 || row.upstreamId === '') return row;
  const channel = ctx.channels.get(row.channelId);
  if (!channel) return row;
  let job: Record<string, unknown>;
  try {
    job = jsonOf(
      await callUpstream(
        ctx.upstream.dispatcherFor(channel.proxy),
        openAiUrlOf(channel, `/fine_tuning/jobs/${encodeURIComponent(row.upstreamId)}`),
        { method: 'GET', headers: openAiHeadersOf(channel) },
        'reading a fine-tuning job',
      ),
    );
  } catch (err) {
    ctx.log.warn({ err, jobId: row.id }, 'could not read a fine-tuning job upstream');
    return row;
  }
  const status = typeof job.status === 'string' ? job.status : row.status;
  if (FINAL.has(status)) {
    const trained = typeof job.trained_tokens === 'number' && job.trained_tokens > 0 ? job.trained_tokens : 0;
    await settleJob(ctx, row.id, { status, trainedTokens: trained, job });
  } else {
    await ctx.deps.db
      .update(fineTuningJobs)
      .set({ status, job })
      .where(and(eq(fineTuningJobs.id, row.id), eq(fineTuningJobs.settledAt, 0)));
  }
  const [fresh] = await ctx.deps.db.select().from(fineTuningJobs).where(eq(fineTuningJobs.id, row.id));
  return fresh ?? row;
}

/** Open jobs brought up to date by the lease holder's pass. */
export async function refreshOpenJobs(ctx: RelayContext, limit: number): Promise<number> {
  const open = await ctx.deps.db
    .select()
    .from(fineTuningJobs)
    .where(eq(fineTuningJobs.settledAt, 0))
    .limit(limit);
  for (const row of open) await refreshJob(ctx, row);
  return open.length;
}

async function withJob(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  then: (row: FineTuningJob) => Promise<unknown>,
) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const row = await ownJob(ctx, caller.user.id, jobIdOf(request));
  if (!row)
    return sendError(request, reply, notFound('fine-tuning job', jobIdOf(request)), openAiChatIngress);
  return then(row);
}

/** Events and checkpoints: the channel's list as it answers, the gateway's job id in place of the upstream's. */
async function passList(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  what: 'events' | 'checkpoints',
) {
  return withJob(ctx, request, reply, async (row) => {
    const channel = ctx.channels.get(row.channelId);
    if (!channel || row.upstreamId === '') return reply.send({ object: 'list', data: [], has_more: false });
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query as Record<string, unknown>))
      if ((key === 'after' || key === 'limit') && typeof value === 'string') query.set(key, value);
    const base = openAiUrlOf(channel, `/fine_tuning/jobs/${encodeURIComponent(row.upstreamId)}/${what}`);
    const url = query.size === 0 ? base : `${base}${base.includes('?') ? '&' : '?'}${query}`;
    try {
      const text = await callUpstream(
        ctx.upstream.dispatcherFor(channel.proxy),
        url,
        { method: 'GET', headers: openAiHeadersOf(channel) },
        `reading fine-tuning ${what}`,
      );
      const list = jsonOf(text);
      const data = Array.isArray(list.data)
        ? list.data.map((item) =>
            isRecord(item) && 'fine_tuning_job_id' in item ? { ...item, fine_tuning_job_id: row.id } : item,
          )
        : [];
      return reply.send({ object: 'list', data, has_more: list.has_more === true });
    } catch {
      return sendError(
        request,
        reply,
        localError(502, 'upstream_error', `the upstream could not list the job's ${what} now`),
        openAiChatIngress,
      );
    }
  });
}

async function listJobs(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const query = request.query as Record<string, string | undefined>;
  const limit = listLimitOf(query);
  const conditions = [eq(fineTuningJobs.userId, caller.user.id)];
  const after = query.after ? await ownJob(ctx, caller.user.id, query.after) : undefined;
  if (after) conditions.push(lt(fineTuningJobs.createdAt, after.createdAt));
  const rows = await ctx.deps.db
    .select()
    .from(fineTuningJobs)
    .where(and(...conditions))
    .orderBy(desc(fineTuningJobs.createdAt), desc(fineTuningJobs.id))
    .limit(limit + 1);
  return reply.send(openAiPage(rows, limit, toClientJob));
}

export function registerFineTuningRoutes(scope: FastifyInstance, ctx: RelayContext): void {
  scope.post('/v1/fine_tuning/jobs', (request, reply) => createJob(ctx, request, reply));
  scope.get('/v1/fine_tuning/jobs', (request, reply) => listJobs(ctx, request, reply));
  scope.get('/v1/fine_tuning/jobs/:id', (request, reply) =>
    withJob(ctx, request, reply, async (row) => reply.send(toClientJob(await refreshJob(ctx, row)))),
  );
  scope.post('/v1/fine_tuning/jobs/:id/cancel', (request, reply) =>
    withJob(ctx, request, reply, async (row) => {
      const channel = ctx.channels.get(row.channelId);
      if (row.settledAt > 0 || !channel || row.upstreamId === '')
        return sendError(
          request,
          reply,
          localError(
            409,
            'job_not_cancellable',
            `the job is ${row.status} and cannot be cancelled`,
            'invalid_request_error',
          ),
          openAiChatIngress,
        );
      try {
        await callUpstream(
          ctx.upstream.dispatcherFor(channel.proxy),
          openAiUrlOf(channel, `/fine_tuning/jobs/${encodeURIComponent(row.upstreamId)}/cancel`),
          { method: 'POST', headers: openAiHeadersOf(channel) },
          'cancelling a fine-tuning job',
        );
      } catch {
        return sendError(
          request,
          reply,
          localError(502, 'upstream_error', 'the upstream could not cancel the job now; try again'),
          openAiChatIngress,
        );
      }
      return reply.send(toClientJob(await refreshJob(ctx, row)));
    }),
  );
  scope.get('/v1/fine_tuning/jobs/:id/events', (request, reply) => passList(ctx, request, reply, 'events'));
  scope.get('/v1/fine_tuning/jobs/:id/checkpoints', (request, reply) =>
    passList(ctx, request, reply, 'checkpoints'),
  );
}

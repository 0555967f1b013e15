/**
 * OpenAI's Batch API for clients (https://platform.openai.com/docs/api-reference/batch): create, retrieve, list,
 * cancel, scoped to the token's user (another user's batch is a 404). A batch runs through its channel's own Batch
 * API (OpenAI, Azure: openai-batch-api.ts; Anthropic: anthropic-batch-api.ts), billed at the provider's batch price
 * (price.ts). Its money (books.ts): the estimate taken with the row, the lines billed and the rest given back once,
 * when the batch ends, by whichever process sees the end first (the poller holding the task lease, or a read).
 */

import { isPricingRefusal } from '@turnpike/core/billing/ratios';
import type { Batch } from '@turnpike/core/db/schema/index';
import { batches } from '@turnpike/core/db/schema/index';
import { isRoot } from '@turnpike/core/domain/users';
import { PROVIDER_TYPES, ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { and, desc, eq, lt } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
import { checkModelAllowed } from '../pipeline/authenticate.ts';
import { holdQuota } from '../pipeline/billing.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { sendError } from '../pipeline/respond.ts';
import { payerOf, pickTaskChannel } from '../tasks/charge.ts';
import { batchApiOf } from './apis.ts';
import { isFinal, newBatchId, toBatchObject } from './batch-object.ts';
import { acceptBatch } from './books.ts';
import { GATEWAY_ENDPOINTS } from './gateway-run.ts';
import { describeProblems, isBatchEndpoint, parseBatchInput } from './input.ts';
import { type BatchMode, estimateBatch } from './price.ts';
import { failBatch, refreshBatch } from './refresh.ts';

/** The channel types whose own Batch API runs a batch, and how. */
const MODE_OF_TYPE: ReadonlyMap<number, BatchMode> = new Map([
  [ProviderTypeId.OpenAI, 'openai'],
  [ProviderTypeId.Azure, 'openai'],
  [ProviderTypeId.Anthropic, 'anthropic'],
]);

export const BATCH_CHANNEL_TYPES: readonly number[] = [...MODE_OF_TYPE.keys()];

/** Every type a batch can run on: the gateway runs the lines itself on those without a Batch API. */
const ANY_CHANNEL_TYPE: readonly number[] = PROVIDER_TYPES.map((type) => type.value);

/** A day, OpenAI's only completion window. */
const WINDOW_SECONDS = 24 * 3600;
const MAX_METADATA_KEYS = 16;

const batchIdOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

async function ownBatch(ctx: RelayContext, userId: number, id: string): Promise<Batch | undefined> {
  if (!isGatewayId(id)) return undefined;
  const [row] = await ctx.deps.db
    .select()
    .from(batches)
    .where(and(eq(batches.id, id), eq(batches.userId, userId)));
  return row;
}

function readCreate(body: unknown) {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const { input_file_id: fileId, endpoint, completion_window: window, metadata } = input;
  if (typeof fileId !== 'string' || fileId === '')
    return invalidRequest('input_file_id is required', 'missing_required_parameter', 'input_file_id');
  if (!isBatchEndpoint(endpoint))
    return invalidRequest(
      'endpoint must be one of /v1/chat/completions, /v1/embeddings, /v1/completions, /v1/responses, /v1/moderations',
      'invalid_value',
      'endpoint',
    );
  if (window !== '24h')
    return invalidRequest('completion_window must be "24h"', 'invalid_value', 'completion_window');
  if (
    metadata !== undefined &&
    metadata !== null &&
    (typeof metadata !== 'object' ||
      Array.isArray(metadata) ||
      Object.keys(metadata).length > MAX_METADATA_KEYS)
  )
    return invalidRequest('metadata must be an object of at most 16 keys', 'invalid_value', 'metadata');
  return { fileId, endpoint, metadata: (metadata ?? null) as Record<string, string> | null };
}

async function createBatch(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const read = readCreate(request.body);
  if ('isLocal' in read) return sendError(request, reply, read, openAiChatIngress);
  const file = await ownFile(ctx, caller.user.id, read.fileId);
  const content = file && (await fileStoreOf(ctx).get(file.id));
  if (!file || !content) return sendError(request, reply, notFound('file', read.fileId), openAiChatIngress);
  if (file.purpose !== 'batch')
    return sendError(
      request,
      reply,
      invalidRequest('the input file must have the purpose "batch"', 'invalid_value', 'input_file_id'),
      openAiChatIngress,
    );
  const parsed = parseBatchInput(content);
  if (!parsed.ok)
    return sendError(
      request,
      reply,
      invalidRequest(
        `the batch input file is not valid: ${describeProblems(parsed.problems)}`,
        parsed.problems[0]?.code,
        'input_file_id',
      ),
      openAiChatIngress,
    );
  if (parsed.url !== read.endpoint)
    return sendError(
      request,
      reply,
      invalidRequest(
        `the input file's lines call ${parsed.url}, not ${read.endpoint}`,
        'mismatched_url',
        'endpoint',
      ),
      openAiChatIngress,
    );
  const { model } = parsed;
  const refused = checkModelAllowed(caller, model);
  if (refused) return sendError(request, reply, refused, openAiChatIngress);
  const channel = pickTaskChannel(ctx, caller, model, ANY_CHANNEL_TYPE);
  if ('isLocal' in channel) return sendError(request, reply, channel, openAiChatIngress);
  const mode = MODE_OF_TYPE.get(channel.type) ?? 'gateway';
  if (mode === 'gateway' && !GATEWAY_ENDPOINTS.has(read.endpoint))
    return sendError(
      request,
      reply,
      invalidRequest(
        `${model} takes batches of /v1/chat/completions and /v1/embeddings only`,
        'invalid_value',
        'endpoint',
      ),
      openAiChatIngress,
    );
  if (mode === 'anthropic' && read.endpoint !== '/v1/chat/completions')
    return sendError(
      request,
      reply,
      invalidRequest(`${model} takes batches of /v1/chat/completions only`, 'invalid_value', 'endpoint'),
      openAiChatIngress,
    );
  const pricing = ctx.prices.pricingOf({
    model,
    group: caller.group,
    acceptUnsetModelRatio: caller.user.acceptUnsetModelRatio,
    isRoot: isRoot(caller.user.role),
  });
  if (isPricingRefusal(pricing))
    return sendError(
      request,
      reply,
      localError(400, pricing.code, pricing.message, 'invalid_request_error'),
      openAiChatIngress,
    );
  const quotaPerUnit = ctx.deps.options.get('QuotaPerUnit');
  const estimate = estimateBatch(pricing, mode, parsed.lines, quotaPerUnit);
  const held = await holdQuota(ctx, payerOf(ctx, caller), estimate);
  if (!held.ok) return sendError(request, reply, held.error, openAiChatIngress);
  const now = Math.floor(Date.now() / 1000);
  // The row (with the estimate taken from the balance) comes first: a batch the upstream accepted always has one.
  const row = await acceptBatch(ctx, held.hold, {
    id: newBatchId(),
    userId: caller.user.id,
    tokenId: caller.token.id,
    tokenLimited: caller.token.unlimitedQuota ? 0 : 1,
    channelId: channel.id,
    mode,
    model,
    endpoint: read.endpoint,
    status: 'validating',
    inputFileId: file.id,
    total: parsed.lines.length,
    held: estimate,
    pricing: pricing as unknown as Record<string, unknown>,
    username: caller.user.username,
    tokenName: caller.token.name,
    group: caller.group,
    metadata: read.metadata,
    createdAt: now,
    expiresAt: now + WINDOW_SECONDS,
  });
  const api = batchApiOf(mode);
  if (api) {
    try {
      const submitted = await api.submit(channel, ctx.upstream.dispatcherFor(channel.proxy), {
        lines: parsed.lines,
        endpoint: read.endpoint,
        upstreamModel: channel.modelMapping[model] ?? model,
        metadata: read.metadata,
        options: ctx.deps.options,
      });
      await ctx.deps.db
        .update(batches)
        .set({ upstreamId: submitted.upstreamId, upstreamFileId: submitted.upstreamFileId })
        .where(eq(batches.id, row.id));
    } catch (err) {
      request.log.warn({ err, batchId: row.id, channelId: channel.id }, 'the upstream refused a batch');
      await failBatch(ctx, row.id, 'the upstream did not accept the batch');
      return sendError(
        request,
        reply,
        localError(
          502,
          'upstream_error',
          `the upstream did not accept the batch ${row.id}; nothing was charged`,
        ),
        openAiChatIngress,
      );
    }
  }
  const [stored] = await ctx.deps.db.select().from(batches).where(eq(batches.id, row.id));
  return reply.send(toBatchObject(stored ?? row));
}

async function retrieveBatch(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const row = await ownBatch(ctx, caller.user.id, batchIdOf(request));
  if (!row) return sendError(request, reply, notFound('batch', batchIdOf(request)), openAiChatIngress);
  return reply.send(toBatchObject(await refreshBatch(ctx, row)));
}

async function listBatches(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const query = request.query as Record<string, string | undefined>;
  const limit = listLimitOf(query);
  const conditions = [eq(batches.userId, caller.user.id)];
  if (query.after) {
    const after = await ownBatch(ctx, caller.user.id, query.after);
    if (after) conditions.push(lt(batches.createdAt, after.createdAt));
  }
  const rows = await ctx.deps.db
    .select()
    .from(batches)
    .where(and(...conditions))
    .orderBy(desc(batches.createdAt), desc(batches.id))
    .limit(limit + 1);
  return reply.send(openAiPage(rows, limit, toBatchObject));
}

async function cancelBatch(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const row = await ownBatch(ctx, caller.user.id, batchIdOf(request));
  if (!row) return sendError(request, reply, notFound('batch', batchIdOf(request)), openAiChatIngress);
  if (isFinal(row.status) || row.status === 'cancelling')
    return sendError(
      request,
      reply,
      localError(
        409,
        'batch_not_cancellable',
        `the batch is ${row.status} and cannot be cancelled`,
        'invalid_request_error',
      ),
      openAiChatIngress,
    );
  const api = batchApiOf(row.mode as BatchMode);
  const channel = ctx.channels.get(row.channelId);
  if (api && row.upstreamId !== '' && channel) {
    try {
      await api.cancel(channel, ctx.upstream.dispatcherFor(channel.proxy), row.upstreamId);
    } catch (err) {
      request.log.warn({ err, batchId: row.id }, 'the upstream refused to cancel a batch');
      return sendError(
        request,
        reply,
        localError(502, 'upstream_error', 'the upstream could not cancel the batch now; try again'),
        openAiChatIngress,
      );
    }
  }
  await ctx.deps.db
    .update(batches)
    .set({ status: 'cancelling', cancellingAt: Math.floor(Date.now() / 1000) })
    .where(and(eq(batches.id, row.id), eq(batches.settledAt, 0)));
  const [after] = await ctx.deps.db.select().from(batches).where(eq(batches.id, row.id));
  return reply.send(toBatchObject(await refreshBatch(ctx, after ?? row)));
}

/** The batch routes, under the `/v1` prefix of `scope`. */
export function registerBatchRoutes(scope: FastifyInstance, ctx: RelayContext): void {
  scope.post('/v1/batches', (request, reply) => createBatch(ctx, request, reply));
  scope.get('/v1/batches', (request, reply) => listBatches(ctx, request, reply));
  scope.get('/v1/batches/:id', (request, reply) => retrieveBatch(ctx, request, reply));
  scope.post('/v1/batches/:id/cancel', (request, reply) => cancelBatch(ctx, request, reply));
}

/**
 * The models the caller's group can route: `GET /v1/models` and `/v1/models/:model` in OpenAI's list shape, or
 * in Anthropic's (https://docs.anthropic.com/en/api/models-list) when the caller is an Anthropic client (it sends
 * `anthropic-version`); `GET /v1beta/models` and `/v1beta/models/:model` in Gemini's
 * (https://ai.google.dev/api/models).
 */
import { carriedBy } from '@turnpike/core/providers/catalogue';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ingress } from '../contract.ts';
import { localError } from '../errors.ts';
import { geminiIngress } from '../formats/gemini/ingress.ts';
import { modelsOfGroup, tiersFor } from '../routing/pick.ts';
import type { Caller } from '../state/auth-cache.ts';
import { authenticateRequest } from './authenticate-request.ts';
import type { RelayContext } from './context.ts';
import { sendError } from './respond.ts';

/** A fixed creation time: OpenAI's field is required, and a changing value would only confuse caches. */
const CREATED = 1_626_777_600;
const CREATED_AT = new Date(CREATED * 1000).toISOString();

/**
 * OpenAI's model object; `batch_price` (the gateway's own field) is true when a channel serving the model in the
 * caller's group runs batches through its provider's Batch API, at the provider's batch price (docs/adr/0050).
 */
const modelObject = (id: string, batchPrice: boolean) => ({
  id,
  object: 'model',
  created: CREATED,
  owned_by: 'turnpike',
  batch_price: batchPrice,
});

/** Whether a channel of the caller's group that serves the model carries batches (the catalogue says which). */
function takesBatchPrice(ctx: RelayContext, group: string, model: string): boolean {
  return tiersFor(ctx.channels.table, group, model).some((tier) =>
    tier.channelIds.some((id) => {
      const channel = ctx.channels.get(id);
      return channel !== undefined && carriedBy(channel.type).includes('batches');
    }),
  );
}
const anthropicModel = (id: string) => ({ type: 'model', id, display_name: id, created_at: CREATED_AT });
const geminiModel = (id: string) => ({
  name: `models/${id}`,
  baseModelId: id,
  version: '001',
  displayName: id,
  supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent'],
});

function visibleModels(ctx: RelayContext, caller: Caller): string[] {
  const models = modelsOfGroup(ctx.channels.table, caller.group);
  const limits = caller.token.modelLimits;
  return limits === undefined ? models : models.filter((m) => limits.has(m));
}

const notFound = (model: string) =>
  localError(404, 'model_not_found', `The model '${model}' does not exist`, 'invalid_request_error');

/** `GET /v1/models` for a client of `ingress` (OpenAI's or Anthropic's, decided at the door). */
export async function listModels(
  ctx: RelayContext,
  ingress: Ingress,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const anthropic = ingress.format === 'anthropic';
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error, ingress);
  const models = visibleModels(ctx, auth.caller);
  if (!anthropic)
    return reply.send({
      object: 'list',
      data: models.map((model) => modelObject(model, takesBatchPrice(ctx, auth.caller.group, model))),
    });
  return reply.send({
    data: models.map(anthropicModel),
    has_more: false,
    first_id: models[0] ?? null,
    last_id: models.at(-1) ?? null,
  });
}

export async function retrieveModel(
  ctx: RelayContext,
  ingress: Ingress,
  request: FastifyRequest<{ Params: { model: string } }>,
  reply: FastifyReply,
) {
  const anthropic = ingress.format === 'anthropic';
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error, ingress);
  const { model } = request.params;
  if (!visibleModels(ctx, auth.caller).includes(model))
    return sendError(request, reply, notFound(model), ingress);
  return reply.send(
    anthropic ? anthropicModel(model) : modelObject(model, takesBatchPrice(ctx, auth.caller.group, model)),
  );
}

/** `GET /v1beta/models` and `/v1beta/models/<model>` (`model` undefined: the list). */
export async function geminiModels(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  model: string | undefined,
) {
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error, geminiIngress);
  const models = visibleModels(ctx, auth.caller);
  if (model === undefined) return reply.send({ models: models.map(geminiModel) });
  const id = model.replace(/^models\//, '');
  if (!models.includes(id)) return sendError(request, reply, notFound(id), geminiIngress);
  return reply.send(geminiModel(id));
}

/** `GET /v1/models` and `/v1/models/:model`: the models the caller's group can route, in OpenAI's list shape. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { localError } from '../errors.ts';
import { modelsOfGroup } from '../routing/pick.ts';
import type { Caller } from './authenticate.ts';
import { authenticateRequest } from './authenticate-request.ts';
import type { RelayContext } from './context.ts';
import { sendError } from './respond.ts';

/** A fixed creation time: OpenAI's field is required, and a changing value would only confuse caches. */
const CREATED = 1_626_777_600;

const modelObject = (id: string) => ({ id, object: 'model', created: CREATED, owned_by: 'turnpike' });

function visibleModels(ctx: RelayContext, caller: Caller): string[] {
  const models = modelsOfGroup(ctx.channels.table, caller.group);
  const limits = caller.token.modelLimits;
  return limits === undefined ? models : models.filter((m) => limits.has(m));
}

export async function listModels(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error);
  return reply.send({ object: 'list', data: visibleModels(ctx, auth.caller).map(modelObject) });
}

export async function retrieveModel(
  ctx: RelayContext,
  request: FastifyRequest<{ Params: { model: string } }>,
  reply: FastifyReply,
) {
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error);
  const { model } = request.params;
  if (!visibleModels(ctx, auth.caller).includes(model))
    return sendError(
      request,
      reply,
      localError(404, 'model_not_found', `The model '${model}' does not exist`, 'invalid_request_error'),
    );
  return reply.send(modelObject(model));
}

/**
 * `GET` and `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`
 * (https://platform.openai.com/docs/api-reference/responses/get, /delete, /input-items): the caller's own stored
 * responses, in OpenAI's shapes. An id of another user's, expired, deleted or never issued is the same 404, so
 * nothing tells one from the other. These are reads a client asks for, not the relay's request path.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { localError } from '../errors.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { authenticateRequest } from '../pipeline/authenticate-request.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { sendError } from '../pipeline/respond.ts';
import { listPage, readListQuery } from './items.ts';

type Request = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>;

/** OpenAI's answer for a response it does not have. */
const notFound = (id: string) =>
  localError(404, 'not_found', `Response with id '${id}' not found.`, 'invalid_request_error');

/** The caller's user id, or the error already sent. */
async function userOf(ctx: RelayContext, request: Request, reply: FastifyReply): Promise<number | undefined> {
  const auth = await authenticateRequest(ctx, request);
  if (auth.ok) return auth.caller.user.id;
  sendError(request, reply, auth.error, openAiChatIngress);
  return undefined;
}

export function registerResponseRoutes(relay: FastifyInstance, ctx: RelayContext): void {
  relay.get('/responses/:id', async (request: Request, reply) => {
    const userId = await userOf(ctx, request, reply);
    if (userId === undefined) return reply;
    const row = await ctx.responses.find(userId, request.params.id);
    if (!row) return sendError(request, reply, notFound(request.params.id), openAiChatIngress);
    return reply.send(row.response);
  });

  relay.delete('/responses/:id', async (request: Request, reply) => {
    const userId = await userOf(ctx, request, reply);
    if (userId === undefined) return reply;
    const { id } = request.params;
    if (!(await ctx.responses.remove(userId, id)))
      return sendError(request, reply, notFound(id), openAiChatIngress);
    return reply.send({ id, object: 'response', deleted: true });
  });

  relay.get('/responses/:id/input_items', async (request: Request, reply) => {
    const userId = await userOf(ctx, request, reply);
    if (userId === undefined) return reply;
    const query = readListQuery(request.query ?? {});
    if (typeof query === 'string')
      return sendError(
        request,
        reply,
        localError(400, 'invalid_value', query, 'invalid_request_error'),
        openAiChatIngress,
      );
    const row = await ctx.responses.find(userId, request.params.id);
    if (!row) return sendError(request, reply, notFound(request.params.id), openAiChatIngress);
    return reply.send(listPage(row.input, query));
  });
}

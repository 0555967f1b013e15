/**
 * OpenAI routes the gateway does not relay (the legacy fine-tunes, image variations, deleting a model): 501
 * `api_not_implemented` in OpenAI's error shape, after token auth, as the reference answers them.
 */

import type { RelayReply, RelayRequest } from '../contract.ts';
import { localError } from '../errors.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { authenticateRequest } from './authenticate-request.ts';
import type { RelayContext } from './context.ts';
import { sendError } from './respond.ts';

export async function notImplemented(
  ctx: RelayContext,
  request: RelayRequest,
  reply: RelayReply,
): Promise<RelayReply> {
  const auth = await authenticateRequest(ctx, request);
  if (!auth.ok) return sendError(request, reply, auth.error, openAiChatIngress);
  return sendError(
    request,
    reply,
    localError(
      501,
      'api_not_implemented',
      `${request.method} ${request.url.split('?')[0]} is not implemented by this gateway`,
      'new_api_error',
    ),
    openAiChatIngress,
  );
}

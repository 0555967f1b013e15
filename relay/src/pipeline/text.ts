/**
 * `POST /v1/chat/completions` and `POST /v1/embeddings` — kept under their first names for callers of the first
 * slice. Every endpoint now runs through the shared pipeline (relay.ts, with the per-endpoint rules in
 * endpoints/): authenticate → rate limit → price → reserve → attempts over channels → pipe → settle → log.
 *
 * The charged quota is returned in the `x-turnpike-quota` header; for a stream the head is sent before the bill
 * is known, so it comes as the SSE comment `: x-turnpike-quota: <n>` just before the end (comments are ignored
 * by every SSE client, the official SDKs included, and no HTTP trailer survives common proxies).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TextEndpoint } from '../adapters/registry.ts';
import type { RelayContext } from './context.ts';
import { chatSpec, embeddingsSpec } from './endpoints/text.ts';
import { handleRelay } from './relay.ts';

export { sendError } from './respond.ts';
export type { TextEndpoint };

export function handleText(
  ctx: RelayContext,
  endpoint: 'chat' | 'embeddings',
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  return handleRelay(ctx, endpoint === 'chat' ? chatSpec : embeddingsSpec, request, reply);
}

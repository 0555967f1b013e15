/**
 * The handler of a relayed route: the spec's ingress is bound to the request (so every answer and refusal of the
 * pipeline is in the client's shape) and the caller's key, wherever the client's format keeps it, is read into
 * `Authorization` for the token check. OpenAI routes need neither and call the pipeline directly.
 */
import type { EndpointSpec, Ingress, RelayReply, RelayRequest } from '../contract.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { handleRelay } from '../pipeline/relay.ts';
import { bindIngress } from '../pipeline/respond.ts';

export type RelayHandler = (request: RelayRequest, reply: RelayReply) => Promise<unknown>;

/** Binds `ingress` to the request and puts the key it finds where the token check reads it. */
export function enterThrough(ingress: Ingress, request: RelayRequest): void {
  bindIngress(request, ingress);
  const key = ingress.keyOf(request);
  if (key !== undefined) request.headers.authorization = `Bearer ${key}`;
  else delete request.headers.authorization;
}

export function relayHandler(ctx: RelayContext, spec: EndpointSpec): RelayHandler {
  const { ingress } = spec;
  if (ingress === undefined || ingress.format === 'openai')
    return (request, reply) => handleRelay(ctx, spec, request, reply);
  return (request, reply) => {
    enterThrough(ingress, request);
    return handleRelay(ctx, spec, request, reply);
  };
}

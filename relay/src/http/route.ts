/**
 * The handler of a relayed route: the client's format is decided here, once per call (./protocol.ts), and handed
 * to the pipeline, which answers and refuses in its shapes; the caller's key, wherever that format keeps it, is
 * read into `Authorization` for the token check.
 */
import type { EndpointSpec, RelayReply, RelayRequest } from '../contract.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { handleRelay } from '../pipeline/relay.ts';
import { enterThrough, ingressOfSpec } from './protocol.ts';

export type RelayHandler = (request: RelayRequest, reply: RelayReply) => Promise<unknown>;

export function relayHandler(ctx: RelayContext, spec: EndpointSpec): RelayHandler {
  const ingress = ingressOfSpec(spec);
  return (request, reply) => {
    enterThrough(ingress, request);
    return handleRelay(ctx, spec, ingress, request, reply);
  };
}

import type { Billing } from '../books/settle.ts';
import type { EndpointSpec, Ingress, PreparedRequest, RelayReply, RelayRequest } from '../contract.ts';
import type { StepMarks } from '../metrics/tracing.ts';
import type { Caller } from '../state/auth-cache.ts';
import type { ContentCapture } from './content-capture.ts';
import type { StoredCall } from './stored-call.ts';

/**
 * One relayed call as every step after authentication sees it (docs/adr/0035): made once at the edge
 * (`handleRelay`, the playground) and passed to each step instead of an argument list. It grows as the steps learn
 * more: `prepare` adds the client's request ({@link PreparedExchange}), the hold adds the bill and the client-gone
 * signal ({@link HeldExchange}); the object stays the same one, so a step never copies the call.
 */
export interface Exchange {
  readonly request: RelayRequest;
  readonly reply: RelayReply;
  readonly spec: EndpointSpec;
  /** The client's format: how its request reads and how its answers, streams and errors are written. */
  readonly ingress: Ingress;
  readonly caller: Caller;
  /** `performance.now()` when the call arrived: the clock of the first-token time and the log's duration. */
  readonly startedAt: number;
  /** Step marks for the call's trace; undefined while tracing is off. */
  readonly steps: StepMarks | undefined;
  /** The console playground: billed to the user only (no token balance). */
  readonly isPlayground: boolean;
}

/** The call once its request is read. */
export interface PreparedExchange extends Exchange {
  readonly prepared: PreparedRequest;
}

/** The call once its most possible cost is held: what the attempts, the answer and the settlement use. */
export interface HeldExchange extends PreparedExchange {
  readonly billing: Billing;
  /** Aborted when the client goes away before the answer is complete; it cancels the upstream request. */
  readonly clientGone: AbortController;
  /** The content log's capture, only when the caller's group or token keeps content logs (docs/adr/0045). */
  readonly capture?: ContentCapture | undefined;
  /** A `/v1/responses` call's stored side (docs/adr/0051): the chain it continues, the answer kept. */
  readonly stored?: StoredCall | undefined;
}

/** Adds what a step learnt to the call, keeping it the same object. */
export const growExchange = <E extends Exchange, A extends object>(exchange: E, added: A): E & A =>
  Object.assign(exchange, added);

/**
 * Attempts over channels (reference §4.2): choose a channel (`choose-channel.ts`: retries walk down the priority
 * tiers and never pick a tried channel again), send one attempt to it (`send-attempt.ts`: its provider builds the
 * upstream request, and a 200 is handed to the endpoint's relay step), and go on while the typed outcome says so.
 * Returns the error to answer with, or undefined when the answer was sent (or the client left). Never settles on
 * failure: the caller refunds whatever is left unsettled.
 *
 * The seam of formats and providers (docs/adr/0018, 0024): when the channel's format is the client's the request
 * goes up as the client sent it and the answer comes back unread; otherwise the request goes through the canonical
 * chat shape (the ingress reads it, the format writes it) and the answer back. A channel whose provider can serve
 * the endpoint neither way is skipped. Upstream error text is shown and logged with the channel's credentials removed.
 *
 * Optional retry rules (off by default): `FirstTokenTimeoutSeconds` gives up on a stream whose first output has
 * not arrived in time, and `RetryEmptyResponseEnabled` treats a 200 with no output and no usage as a failure;
 * both go on to the next channel with the reservation kept, like an upstream 5xx.
 */

import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import type { ChatRequest } from '../formats/canonical.ts';
import { affinityOf, type CallAffinity } from '../routing/affinity.ts';
import { chooseChannel } from './choose-channel.ts';
import type { RelayContext } from './context.ts';
import type { HeldExchange } from './exchange.ts';
import { admitAttempt, sendAttempt } from './send-attempt.ts';
import { type CompletionCheck, completionCheckOf } from './sensitive-words.ts';

/** The attempts of one call: the options they read once, and what the earlier attempts left. */
export interface Attempts {
  readonly isStream: boolean;
  readonly retryTimes: number;
  /** `FirstTokenTimeoutSeconds` for a stream; 0: no first-token timer. */
  readonly firstTokenSeconds: number;
  readonly retryEmptyEnabled: boolean;
  readonly streamTimeoutSeconds: number;
  /** Keep-alive interval of a stream; 0 = none. */
  readonly pingMs: number;
  readonly completionCheck: CompletionCheck | undefined;
  readonly passThrough: boolean;
  /** Session affinity (docs/adr/0027): the session's bound channel and key first, when they can serve now. */
  readonly affinity: CallAffinity | undefined;
  /** The request in the canonical shape, read once for every converted attempt. */
  canonical(): ChatRequest;
  /** Why the request cannot be converted for a channel of another format (asked once), or undefined. */
  refusal(): RelayError | undefined;
  /** Channels tried (a channel whose failure was one key's alone is taken out again: it may serve with another). */
  readonly tried: Set<number>;
  /** Channels an attempt was sent to, in order (the consume log's `use_channel`). */
  readonly used: number[];
  /** Time the earlier attempts spent on their upstreams. */
  upstreamMsBefore: number;
}

/**
 * What one attempt came to:
 * - `done`: the answer was sent, or the client left (the caller refunds what is unsettled);
 * - `skipped`: the channel could not take this call (no route, a refused conversion, its own limit); it does not
 *   count as an attempt, and its reason is answered if no channel serves;
 * - `failed`: the upstream refused or broke; `retry` says whether another channel may be tried.
 */
export type AttemptOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'skipped'; readonly error: RelayError | undefined }
  | { readonly kind: 'failed'; readonly error: RelayError; readonly retry: boolean };

export async function runAttempts(
  ctx: RelayContext,
  exchange: HeldExchange,
): Promise<RelayError | undefined> {
  const { caller, prepared } = exchange;
  // Session affinity (docs/adr/0027): the session's bound channel and key first, when they can serve now; a
  // Responses chain goes first to the channel that holds its previous id (docs/adr/0051).
  const affinity =
    caller.forcedChannelId === undefined
      ? (exchange.stored?.affinity(ctx, caller.group, prepared.model) ??
        (await affinityOf(ctx, exchange.request, bodyOf(exchange), {
          tokenId: caller.token.id,
          group: caller.group,
          model: prepared.model,
        })))
      : undefined;
  const attempts = planAttempts(ctx, exchange, affinity);
  const isForced = caller.forcedChannelId !== undefined;
  let lastError: RelayError | undefined;
  for (let attempt = 0; attempt <= attempts.retryTimes; ) {
    const choice = chooseChannel(ctx, exchange, attempts, attempt);
    if (choice.kind === 'unavailable') return choice.error;
    if (choice.kind === 'none') break;
    const admitted = await admitAttempt(ctx, exchange, attempts, choice.channel, attempt);
    const outcome =
      admitted.kind === 'admitted' ? await sendAttempt(ctx, exchange, attempts, admitted) : admitted;
    if (outcome.kind === 'done') return undefined;
    if (outcome.kind === 'skipped') {
      lastError = outcome.error ?? lastError;
      // Another channel of the model may speak a format this endpoint can use; a forced one has no other.
      if (isForced) break;
      continue;
    }
    lastError = outcome.error;
    if (!outcome.retry) return lastError;
    attempt += 1;
  }
  return (
    lastError ??
    localError(
      503,
      'model_not_found',
      `no channel is available for model ${prepared.model} in group ${caller.group}`,
    )
  );
}

/** Reads the options the attempts of this call go by, once. */
function planAttempts(
  ctx: RelayContext,
  exchange: HeldExchange,
  affinity: CallAffinity | undefined,
): Attempts {
  const { prepared, spec, ingress } = exchange;
  const { options } = ctx.deps;
  const isStream = prepared.isStream && spec.stream !== undefined;
  // A stored chain the call continues is replayed to a channel of another format (docs/adr/0051).
  const body = exchange.stored?.convertedBody ?? bodyOf(exchange);
  let chat: ChatRequest | undefined;
  let refused: RelayError | null | undefined;
  return {
    isStream,
    retryTimes: options.get('RetryTimes'),
    firstTokenSeconds: isStream ? options.get('FirstTokenTimeoutSeconds') : 0,
    retryEmptyEnabled: options.get('RetryEmptyResponseEnabled'),
    streamTimeoutSeconds: options.get('StreamingTimeoutSeconds'),
    pingMs: options.get('general_setting.ping_interval_enabled')
      ? options.get('general_setting.ping_interval_seconds') * 1000
      : 0,
    completionCheck: completionCheckOf(ctx),
    passThrough: options.get('global.pass_through_request_enabled'),
    affinity,
    canonical() {
      chat ??= ingress.toChat(body ?? {}, prepared.model, isStream);
      return chat;
    },
    refusal() {
      refused ??= ingress.refuseConversion?.(body ?? {}) ?? null;
      return refused ?? undefined;
    },
    tried: new Set(),
    used: [],
    upstreamMsBefore: 0,
  };
}

const bodyOf = ({ prepared }: HeldExchange) =>
  prepared.payload.kind === 'json' ? prepared.payload.body : undefined;

/**
 * One `/v1/responses` call as stored responses see it (docs/adr/0051): the chain its `previous_response_id` names,
 * read once when the call opens, and the answer kept when it ends.
 *
 * Where the chain goes: an OpenAI channel that holds the previous id (it answered it and stored it) is tried first
 * and gets the request as sent; any other channel gets the stored chain replayed as input, in its own format
 * through the canonical shape (a channel of another format) or as Responses input items (another OpenAI
 * channel). An id the gateway neither keeps nor knows a holder of is a 400 in OpenAI's shape, as OpenAI answers
 * an id it does not have; one only a channel holds (the gateway kept nothing) goes to that channel alone.
 */

import type { SettlementContext } from '../books/settlement-context.ts';
import type { Json, RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import { type ChainTurn, inputItemsOf, replayInput } from '../responses-store/items.ts';
import type { KeptResponse, ResponseStore } from '../responses-store/store.ts';
import type { CallAffinity } from '../routing/affinity.ts';
import { servesRoute } from '../routing/affinity.ts';
import type { PreparedExchange } from './exchange.ts';

/** What a stored call reads of the relay's context (the pipeline's context is one). */
type StoredCallContext = Pick<SettlementContext, 'deps' | 'channels' | 'metrics'> & {
  readonly responses: ResponseStore;
};

const DAY_MS = 24 * 3600 * 1000;
/** How long OpenAI keeps a stored response (https://platform.openai.com/docs/guides/your-data): its binding's life. */
const UPSTREAM_RETENTION_MS = 30 * DAY_MS;
/** The longest id kept (the column's width); OpenAI's are far shorter. */
const MAX_ID_LENGTH = 128;
/** The longest chain walked; older turns than this are not replayed. */
const MAX_CHAIN = 1_000;

export interface StoredCall {
  /** The request a channel of another format is given (the chain replayed), or undefined to read the client's. */
  readonly convertedBody: Json | undefined;
  /**
   * The request an attempt on a channel of the client's own format sends: undefined for the client's as sent, a
   * body with the chain replayed, or the error that skips the channel (it cannot continue the chain).
   */
  passThroughBody(channelId: number): Json | RelayError | undefined;
  /** Affinity to the channel that holds the previous id, when it can serve now. */
  affinity(ctx: StoredCallContext, group: string, model: string): CallAffinity | undefined;
  /** The response the client got: kept when the call asked for it, its id bound to an OpenAI channel holding it. */
  answered(response: Readonly<Json>, channelId: number, converted: boolean): void;
}

/** OpenAI's answer for a `previous_response_id` it does not have. */
export const previousNotFound = (id: string): RelayError => ({
  ...localError(
    400,
    'previous_response_not_found',
    `Previous response with id '${id}' not found.`,
    'invalid_request_error',
  ),
  param: 'previous_response_id',
});

/** The chain ending at `id`, oldest first; `whole` is false when an older turn is gone (expired or deleted). */
async function walkChain(
  ctx: StoredCallContext,
  userId: number,
  id: string,
): Promise<{ turns: KeptResponse[]; whole: boolean } | undefined> {
  const turns: KeptResponse[] = [];
  const seen = new Set<string>();
  let next: string | null = id;
  let whole = true;
  while (next !== null && !seen.has(next) && turns.length < MAX_CHAIN) {
    seen.add(next);
    const row = await ctx.responses.find(userId, next);
    if (!row) {
      whole = turns.length === 0;
      break;
    }
    turns.push(row);
    next = row.previousResponseId;
  }
  if (turns.length === 0) return undefined;
  return { turns: turns.reverse(), whole };
}

const turnOf = (row: KeptResponse): ChainTurn => ({
  input: row.input,
  output: Array.isArray(row.response.output) ? row.response.output : [],
});

/** The client's request with the chain's history before its own input, and no previous id. */
function replayed(body: Readonly<Json>, turns: readonly KeptResponse[], keepReasoning: boolean): Json {
  const { previous_response_id: _previous, ...rest } = body;
  const own =
    typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  return {
    ...rest,
    input: [...replayInput(turns.map(turnOf), keepReasoning), ...(Array.isArray(own) ? own : [])],
  };
}

/**
 * The stored side of a `/v1/responses` call, or undefined when it has none (another endpoint, `store: false`
 * without a previous id); a RelayError when its previous id is unknown.
 */
export async function openStoredCall(
  ctx: StoredCallContext,
  exchange: PreparedExchange,
): Promise<StoredCall | RelayError | undefined> {
  const { prepared, caller, spec } = exchange;
  if (spec.endpoint !== 'responses' || prepared.payload.kind !== 'json') return undefined;
  const body = prepared.payload.body;
  const days = ctx.deps.options.get('ResponsesRetentionDays');
  const isStored = body.store !== false;
  const previous =
    typeof body.previous_response_id === 'string' && body.previous_response_id !== ''
      ? body.previous_response_id
      : undefined;
  if (!isStored && previous === undefined) return undefined;
  const userId = caller.user.id;

  let holder: number | undefined;
  let turns: KeptResponse[] | undefined;
  if (previous !== undefined) {
    const chain = await walkChain(ctx, userId, previous);
    const head = chain?.turns.at(-1);
    holder = head?.isUpstreamHeld ? head.channelId : await ctx.responses.boundChannel(userId, previous);
    if (chain?.whole) turns = chain.turns;
    if (!turns && holder === undefined) return previousNotFound(previous);
  }
  const convertedBody = turns ? replayed(body, turns, true) : undefined;
  let passThrough: Json | undefined;

  return {
    convertedBody,
    passThroughBody(channelId) {
      if (previous === undefined || channelId === holder) return undefined;
      if (!turns) return previousNotFound(previous);
      passThrough ??= replayed(body, turns, false);
      return passThrough;
    },
    affinity(context, group, model) {
      if (holder === undefined) return undefined;
      const isUsable =
        context.channels.isAvailable(holder) && servesRoute(context.channels.table, group, model, holder);
      return isUsable ? { preferred: { channelId: holder }, served: () => {} } : undefined;
    },
    answered(response, channelId, converted) {
      const id = response.id;
      if (!isStored || typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH) return;
      const isUpstreamHeld = !converted;
      if (isUpstreamHeld) ctx.responses.bind(userId, id, channelId, UPSTREAM_RETENTION_MS);
      if (days <= 0) return;
      const createdAt = ctx.responses.nowSeconds();
      ctx.responses.keep({
        id,
        userId,
        tokenId: caller.token.id,
        channelId,
        isUpstreamHeld,
        model: prepared.model.slice(0, 255),
        previousResponseId: previous ?? null,
        input: inputItemsOf(body.input),
        response: { ...response, previous_response_id: previous ?? null, store: true },
        createdAt,
        expiresAt: createdAt + days * 24 * 3600,
      });
    },
  };
}

/**
 * Chooses the channel of the next attempt: the token's forced channel, the session's bound channel (docs/adr/0027)
 * while it can serve, else a pick down the priority tiers that never takes a tried channel again (reference §4.2).
 * A multi-key channel lends one usable key to the attempt.
 */
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import { pickChannel } from '../routing/pick.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import type { Attempts } from './attempts.ts';
import type { RelayContext } from './context.ts';
import type { HeldExchange } from './exchange.ts';

export type ChannelChoice =
  | { readonly kind: 'chosen'; readonly channel: RelayChannel }
  /** No channel is left to try. */
  | { readonly kind: 'none' }
  /** The token's forced channel cannot serve: answered as it is. */
  | { readonly kind: 'unavailable'; readonly error: RelayError };

export function chooseChannel(
  ctx: RelayContext,
  { caller, prepared }: HeldExchange,
  attempts: Attempts,
  attempt: number,
): ChannelChoice {
  let channelId: number;
  if (caller.forcedChannelId !== undefined) {
    if (attempt > 0) return { kind: 'none' };
    if (!ctx.channels.isAvailable(caller.forcedChannelId))
      return {
        kind: 'unavailable',
        error: localError(403, 'channel_unavailable', 'the chosen channel does not exist or is disabled'),
      };
    channelId = caller.forcedChannelId;
  } else {
    const bound = attempts.affinity?.preferred;
    const pick =
      bound && !attempts.tried.has(bound.channelId) && ctx.channels.isAvailable(bound.channelId)
        ? { channelId: bound.channelId }
        : pickChannel(ctx.channels.table, {
            group: caller.group,
            model: prepared.model,
            attempt,
            tried: attempts.tried,
            isAvailable: ctx.channels.isAvailable,
          });
    if (!pick) return { kind: 'none' };
    channelId = pick.channelId;
  }
  attempts.tried.add(channelId);
  const channel = ctx.channels.withKey(channelId, attempts.affinity?.preferred?.key);
  if (!channel || channel.key === undefined) return { kind: 'none' };
  return { kind: 'chosen', channel };
}

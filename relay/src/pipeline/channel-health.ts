/**
 * What a failed attempt does to its channel.
 *
 * Automatic disable (reference §4.7): when `AutomaticDisableChannelEnabled` is on, the channel's `auto_ban` is
 * set and the error says the key is unusable (errors.ts `disableReason`), the channel is switched off in memory
 * at once, then in the database (status 3 with the reason, abilities disabled), then every process is told. The
 * write is not awaited by the request.
 *
 * Cool-down (docs/adr/0008-channel-cool-down.md): otherwise, when `ChannelCooldownEnabled` is on and the failure
 * is a busy-or-broken one (429, 408, 5xx, timeouts, connection errors; never a local error), it is counted; the
 * `ChannelCooldownFailures`-th within `ChannelCooldownWindowSeconds` rests the channel for `ChannelCooldownMinutes`
 * in every process (a `channels.cooldown` event). No database write: the channel comes back by itself.
 */
import { abilities, channels } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { disableReason, type RelayError } from '../errors.ts';
import { type CooldownPolicy, countsTowardCooldown } from '../health/cooldown.ts';
import { ChannelStatus, type RelayChannel } from '../state/channel-cache.ts';
import type { RelayContext } from './context.ts';

/** Gemini answers 403 for a revoked key (reference §4.7). */
const GEMINI_TYPE = 24;

/** The `ChannelCooldown*` options as a policy, or undefined when cool-down is off. */
export function cooldownPolicyOf(options: RelayContext['deps']['options']): CooldownPolicy | undefined {
  if (!options.get('ChannelCooldownEnabled')) return undefined;
  return {
    failures: options.get('ChannelCooldownFailures'),
    windowMs: options.get('ChannelCooldownWindowSeconds') * 1000,
    cooldownMs: options.get('ChannelCooldownMinutes') * 60_000,
  };
}

/** Called after every failed upstream attempt (HTTP error, timeout or connection failure) of a channel. */
export function checkChannelHealth(ctx: RelayContext, channel: RelayChannel, error: RelayError): void {
  const reason = disableReason(error, {
    automaticDisableEnabled: ctx.deps.options.get('AutomaticDisableChannelEnabled'),
    autoBan: channel.autoBan,
    isGeminiChannel: channel.type === GEMINI_TYPE,
    keywords: ctx.keywords(),
  });
  if (reason === undefined) {
    countFailure(ctx, channel, error);
    return;
  }
  ctx.channels.markDisabled(channel.id);
  ctx.log.warn({ channelId: channel.id, reason }, 'channel disabled automatically');
  void disableInDatabase(ctx, channel.id, reason).catch((err: unknown) =>
    ctx.log.error({ err, channelId: channel.id }, 'could not store the automatic disable of a channel'),
  );
}

function countFailure(ctx: RelayContext, channel: RelayChannel, error: RelayError): void {
  if (!countsTowardCooldown(error)) return;
  const policy = cooldownPolicyOf(ctx.deps.options);
  if (!policy) return;
  // A provider that says how long to wait (Azure's 429 retry-after) rests the channel that long, at once.
  const until =
    error.upstreamRetryAfterSeconds !== undefined && error.upstreamRetryAfterSeconds > 0
      ? restFor(ctx, channel, error.upstreamRetryAfterSeconds)
      : ctx.channels.cooldown.recordFailure(channel.id, policy);
  if (until !== undefined) {
    // Every other process rests the channel too (channel-cache.ts applies the event).
    void ctx.deps.bus.publish({ type: 'channels.cooldown', id: channel.id, until }).catch(() => 0);
    ctx.log.warn(
      { channelId: channel.id, status: error.status, until: new Date(until).toISOString() },
      'channel cooling down after repeated failures',
    );
  }
}

function restFor(ctx: RelayContext, channel: RelayChannel, seconds: number): number | undefined {
  if (ctx.channels.cooldown.isCoolingDown(channel.id)) return undefined;
  const until = Date.now() + Math.min(seconds, 3600) * 1000;
  ctx.channels.cooldown.rest(channel.id, until);
  return until;
}

export async function disableInDatabase(ctx: RelayContext, channelId: number, reason: string): Promise<void> {
  const { db } = ctx.deps;
  await db.transaction(async (tx) => {
    await tx
      .update(channels)
      .set({
        status: ChannelStatus.AutoDisabled,
        otherInfo: JSON.stringify({ status_reason: reason, status_time: Math.floor(Date.now() / 1000) }),
      })
      .where(eq(channels.id, channelId));
    await tx.update(abilities).set({ enabled: false }).where(eq(abilities.channelId, channelId));
  });
  await ctx.deps.bus.publish({ type: 'channels.changed', ids: [channelId] });
  const name = ctx.channels.get(channelId)?.name ?? '';
  ctx.notifier.notifyRoot({
    type: 'channel_update',
    title: `Channel "${name}" (#${channelId}) was disabled`,
    content: `Channel "${name}" (#${channelId}) was disabled automatically. Reason: ${reason}`,
  });
}

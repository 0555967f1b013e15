/**
 * Automatic disable after a failed attempt (reference §4.7): when `AutomaticDisableChannelEnabled` is on, the
 * channel's `auto_ban` is set and the error says the key is unusable (errors.ts `disableReason`), the channel is
 * switched off in memory at once, then in the database (status 3 with the reason, abilities disabled), then
 * every process is told. The write is not awaited by the request.
 */
import { abilities, channels } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { disableReason, type RelayError } from '../errors.ts';
import { ChannelStatus, type RelayChannel } from '../state/channel-cache.ts';
import type { RelayContext } from './context.ts';

export function checkChannelHealth(ctx: RelayContext, channel: RelayChannel, error: RelayError): void {
  const reason = disableReason(error, {
    automaticDisableEnabled: ctx.deps.options.get('AutomaticDisableChannelEnabled'),
    autoBan: channel.autoBan,
    keywords: ctx.keywords(),
  });
  if (reason === undefined) return;
  ctx.channels.markDisabled(channel.id);
  ctx.log.warn({ channelId: channel.id, reason }, 'channel disabled automatically');
  void disableInDatabase(ctx, channel.id, reason).catch((err: unknown) =>
    ctx.log.error({ err, channelId: channel.id }, 'could not store the automatic disable of a channel'),
  );
}

async function disableInDatabase(ctx: RelayContext, channelId: number, reason: string): Promise<void> {
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
}

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

import { changeKeyRing, keyFingerprint } from '@turnpike/core/channels/key-ring-writes';
import { enabledKeyCount, KeyStatus, setKeyStates } from '@turnpike/core/channels/multi-key';
import { abilities, channels } from '@turnpike/core/db/schema/index';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { eq } from 'drizzle-orm';
import type { RelayError } from '../contract.ts';
import { disableReason } from '../errors.ts';
import { type CooldownPolicy, countsTowardCooldown } from '../health/cooldown.ts';
import { providerFor } from '../providers/registry.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import type { RelayContext } from './context.ts';

/** The `ChannelCooldown*` options as a policy, or undefined when cool-down is off. */
export function cooldownPolicyOf(options: RelayContext['deps']['options']): CooldownPolicy | undefined {
  if (!options.get('ChannelCooldownEnabled')) return undefined;
  return {
    failures: options.get('ChannelCooldownFailures'),
    windowMs: options.get('ChannelCooldownWindowSeconds') * 1000,
    cooldownMs: options.get('ChannelCooldownMinutes') * 60_000,
  };
}

/**
 * Called after every failed upstream attempt (HTTP error, timeout or connection failure) of a channel. Answers
 * true when the failure was the key's alone (a multi-key channel's key disabled or resting, ADR 0027): the
 * channel may serve the retry with another key.
 */
export function checkChannelHealth(ctx: RelayContext, channel: RelayChannel, error: RelayError): boolean {
  const reason = disableReason(error, {
    automaticDisableEnabled: ctx.deps.options.get('AutomaticDisableChannelEnabled'),
    autoBan: channel.autoBan,
    forbiddenMeansRevokedKey: providerFor(channel.type)?.forbiddenMeansRevokedKey === true,
    keywords: ctx.keywords(),
  });
  if (channel.isMultiKey && channel.keyFingerprint !== undefined) {
    const fingerprint = channel.keyFingerprint;
    if (reason !== undefined) {
      disableKey(ctx, channel, fingerprint, reason);
      return true;
    }
    if (!error.isLocal && error.status === 429) {
      restKey(ctx, channel, fingerprint, error);
      return true;
    }
  }
  if (reason === undefined) {
    countFailure(ctx, channel, error);
    return false;
  }
  ctx.channels.markDisabled(channel.id);
  ctx.log.warn({ channelId: channel.id, reason }, 'channel disabled automatically');
  void disableInDatabase(ctx, channel.id, reason).catch((err: unknown) =>
    ctx.log.error({ err, channelId: channel.id }, 'could not store the automatic disable of a channel'),
  );
  return false;
}

/** How long a rate-limited key rests when the upstream does not say: the cool-down's length when it is on. */
const KEY_REST_DEFAULT_MS = 60_000;

/**
 * A key that hit a rate limit rests on its own, in every process (`channels.cooldown` with its fingerprint), for
 * as long as the upstream asked, else the cool-down length, else a minute; the channel's other keys serve on.
 */
function restKey(ctx: RelayContext, channel: RelayChannel, fingerprint: string, error: RelayError): void {
  const seconds = error.upstreamRetryAfterSeconds;
  const ms =
    seconds !== undefined && seconds > 0
      ? Math.min(seconds, 3600) * 1000
      : (cooldownPolicyOf(ctx.deps.options)?.cooldownMs ?? KEY_REST_DEFAULT_MS);
  if (ctx.channels.keyStates.restingUntil(channel.id, fingerprint) !== undefined) return;
  const until = Date.now() + ms;
  ctx.channels.keyStates.rest(channel.id, fingerprint, until);
  void ctx.deps.bus
    .publish({ type: 'channels.cooldown', id: channel.id, until, key: fingerprint })
    .catch(() => 0);
  ctx.log.warn(
    { channelId: channel.id, key: fingerprint, until: new Date(until).toISOString() },
    'channel key resting after a rate limit',
  );
}

/**
 * A key the upstream says is dead is disabled on its own: in memory at once, then in the database (its state in
 * `channel_info`, under the channel's row lock); the channel goes off only when it was the last enabled key.
 */
function disableKey(ctx: RelayContext, channel: RelayChannel, fingerprint: string, reason: string): void {
  ctx.channels.keyStates.markDisabled(channel.id, fingerprint);
  ctx.log.warn({ channelId: channel.id, key: fingerprint, reason }, 'channel key disabled automatically');
  const box = ctx.channels.box;
  void changeKeyRing({ db: ctx.deps.db, bus: ctx.deps.bus, box }, channel.id, (ring) => {
    const index = ring.keys.findIndex((key) => keyFingerprint(key) === fingerprint);
    if (index === -1 || ring.states[index]?.status !== KeyStatus.Enabled)
      return { ring: undefined, result: false };
    const next = setKeyStates(ring, [index], {
      status: KeyStatus.AutoDisabled,
      reason,
      time: Math.floor(Date.now() / 1000),
    });
    return { ring: next, result: enabledKeyCount(next) === 0 };
  })
    .then((outcome) => {
      if (!outcome?.result) return;
      ctx.notifier.notifyRoot({
        type: 'channel_update',
        title: `Channel "${channel.name}" (#${channel.id}) was disabled`,
        content: `Every key of channel "${channel.name}" (#${channel.id}) is disabled. Last reason: ${reason}`,
      });
    })
    .catch((err: unknown) =>
      ctx.log.error({ err, channelId: channel.id }, 'could not store the automatic disable of a channel key'),
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

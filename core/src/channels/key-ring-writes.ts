/**
 * Writes of a multi-key channel's keys and their states (docs/adr/0027). The console API (manage actions, key
 * edits) and the relay (a key disabled automatically) change one channel's ring under a row lock, so two relays
 * disabling two keys of one channel at once both land; the channel and its abilities change in the same
 * transaction and `channels.changed` goes out after it, the path every channel change takes (ADR 0003).
 */
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { SealedBox } from '../crypto/sealed-box.ts';
import type { Db } from '../db/client.ts';
import { type Channel, channels, type NewChannel } from '../db/schema/channels.ts';
import { ChannelStatus } from '../domain/closed-sets.ts';
import type { EventBus } from '../events/bus.ts';
import { createAbilityRepo } from '../repos/ability.repo.ts';
import {
  enabledKeyCount,
  infoOfRing,
  joinKeys,
  type KeyRing,
  parseChannelInfo,
  ringOf,
} from './multi-key.ts';

/** The reason a multi-key channel is switched off when its last enabled key goes. */
export const ALL_KEYS_DISABLED = 'every key of this channel is disabled';

/**
 * A short, stable name of a key that is not the key: how the relay, its events and session bindings refer to a
 * key (positions move when keys are added or removed).
 */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 16);
}

/** The ring of a stored row, or undefined when its key cannot be opened (another CRYPTO_SECRET). */
export function ringOfRow(
  row: Pick<Channel, 'type' | 'key' | 'channelInfo'>,
  box: SealedBox,
): KeyRing | undefined {
  const opened = box.open(row.key);
  return opened === undefined ? undefined : ringOf(row.type, opened, parseChannelInfo(row.channelInfo));
}

const statusReasonOf = (otherInfo: string | null): string | undefined => {
  try {
    const value: unknown = otherInfo ? JSON.parse(otherInfo) : undefined;
    const reason = (value as { status_reason?: unknown } | undefined)?.status_reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The channel status a ring decides, as columns to change: no enabled key left switches an enabled channel off
 * (status 3, the reason in `other_info`); an enabled key brings back a channel that was switched off for that
 * reason only. Empty when the keys decide nothing. Pure.
 */
export function ringStatusPatch(
  current: Pick<Channel, 'status' | 'otherInfo'>,
  ring: KeyRing,
  nowSeconds: number,
): Partial<NewChannel> {
  if (!ring.isMultiKey) return {};
  const enabled = enabledKeyCount(ring);
  if (enabled === 0 && current.status === ChannelStatus.Enabled)
    return {
      status: ChannelStatus.AutoDisabled,
      otherInfo: JSON.stringify({ status_reason: ALL_KEYS_DISABLED, status_time: nowSeconds }),
    };
  if (
    enabled > 0 &&
    current.status === ChannelStatus.AutoDisabled &&
    statusReasonOf(current.otherInfo) === ALL_KEYS_DISABLED
  )
    return { status: ChannelStatus.Enabled, otherInfo: null };
  return {};
}

/** The columns that store `ring` on `current`: the sealed keys, `channel_info`, and the status the keys decide. */
export function ringColumns(
  current: Pick<Channel, 'type' | 'status' | 'otherInfo'>,
  ring: KeyRing,
  box: SealedBox,
  nowSeconds: number,
): Partial<NewChannel> {
  return {
    key: box.seal(joinKeys(current.type, ring.keys, ring.isMultiKey)),
    channelInfo: JSON.stringify(infoOfRing(ring)),
    ...ringStatusPatch(current, ring, nowSeconds),
  };
}

export interface KeyRingChange<T> {
  /** The ring to store, or undefined to change nothing. */
  readonly ring: KeyRing | undefined;
  readonly result: T;
}

/**
 * Locks one channel, hands its ring to `change` and stores what it answers (keys, states, the channel's status and
 * abilities), then publishes `channels.changed`. Answers undefined when the channel does not exist or its key
 * cannot be opened; `change` may throw to refuse (nothing is written).
 */
export async function changeKeyRing<T>(
  deps: { db: Db; bus: EventBus; box: SealedBox },
  channelId: number,
  change: (ring: KeyRing, row: Channel) => KeyRingChange<T>,
): Promise<{ row: Channel; ring: KeyRing; result: T } | undefined> {
  const { db, bus, box } = deps;
  const outcome = await db.transaction(async (tx) => {
    const [row] = await tx.select().from(channels).where(eq(channels.id, channelId)).for('update');
    if (!row) return undefined;
    const ring = ringOfRow(row, box);
    if (!ring) return undefined;
    const { ring: next, result } = change(ring, row);
    if (!next) return { row, ring, result, changed: false };
    const patch = ringColumns(row, next, box, Math.floor(Date.now() / 1000));
    const [updated] = await tx.update(channels).set(patch).where(eq(channels.id, channelId)).returning();
    if (!updated) return undefined;
    await createAbilityRepo(tx).rebuild([updated]);
    return { row: updated, ring: next, result, changed: true };
  });
  if (!outcome) return undefined;
  if (outcome.changed) await bus.publish({ type: 'channels.changed', ids: [channelId] });
  return { row: outcome.row, ring: outcome.ring, result: outcome.result };
}

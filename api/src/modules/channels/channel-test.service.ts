/**
 * Channel tests (reference §4.7, §4.8): one channel on demand, every channel in the background (on demand or
 * every `CHANNEL_TEST_FREQUENCY` minutes), and what a test result does to a channel:
 *
 * - its `response_time` (ms) and `test_time` are stored;
 * - a success writes a consume log under the super administrator with the token name "model test" and the
 *   quota the call would cost, which is never deducted from anyone;
 * - a failure that says the key is unusable, or an answer slower than `ChannelDisableThreshold` seconds,
 *   disables an enabled channel (status 3) when `AutomaticDisableChannelEnabled` is on and the channel's
 *   `auto_ban` is set: the relay's rule (relay/src/errors.ts `disableReason`), which the channel probe applies;
 *   a slow answer that disables nothing is still a success, with the slowness in the message;
 * - a success re-enables a channel the system disabled (status 3 only, never one disabled by hand) when
 *   `AutomaticEnableChannelEnabled` is on.
 *
 * Status changes rebuild the channel's abilities and publish `channels.changed`, so every relay's routing table
 * follows. A run over every channel holds a lease in the shared key/value store (Redis when configured), so two
 * runs never overlap, across replicas included; its progress is kept there too, for the console to poll.
 *
 * The call itself goes through `deps.channelProbe` (core/src/channels/channel-probe.ts), which the server brings
 * from the relay: this module decides what a result does, the relay how a channel is called (docs/adr/0037).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { isPricingRefusal, resolvePricing } from '@turnpike/core/billing/ratios';
import { settleTokens } from '@turnpike/core/billing/settle';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import type { ChannelProbe, ChannelProbeSuccess } from '@turnpike/core/channels/channel-probe';
import { changeKeyRing } from '@turnpike/core/channels/key-ring-writes';
import { KeyStatus, setKeyStates } from '@turnpike/core/channels/multi-key';
import type { Channel, NewChannel } from '@turnpike/core/db/schema/channels';
import { users } from '@turnpike/core/db/schema/users';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { LogType } from '@turnpike/core/domain/logs';
import { Role } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createSmtpMailer } from '@turnpike/core/mail/mailer';
import { createNotifier } from '@turnpike/core/notify/notifier';
import { priceTablesOf } from '@turnpike/core/options/price-tables';
import { createAbilityRepo } from '@turnpike/core/repos/ability.repo';
import { createChannelRepo } from '@turnpike/core/repos/channel.repo';
import { createLogRepo, nowSeconds } from '@turnpike/core/repos/log.repo';
import { and, asc, gte, isNull } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

/** The token name of a test's consume log. */
export const TEST_TOKEN_NAME = 'model test';

/** What `GET /api/channel/test/:id` answers (beside `data`, as the console reads it). */
export interface ChannelTestOutcome {
  readonly success: boolean;
  readonly message: string;
  /** Seconds the test took. */
  readonly time: number;
}

/** What `GET /api/channel/test/progress` answers: the current or last run over every channel. */
export interface TestAllProgress {
  readonly running: boolean;
  /** Channels tested so far. */
  readonly done: number;
  /** Channels this run tests (enabled or auto-disabled ones of a testable type). */
  readonly total: number;
  /** Tests that failed so far. */
  readonly failed: number;
  /** Unix seconds; 0 when no run happened yet. */
  readonly started_at: number;
  /** Unix seconds; 0 while running or before any run. */
  readonly finished_at: number;
}

const IDLE: TestAllProgress = { running: false, done: 0, total: 0, failed: 0, started_at: 0, finished_at: 0 };

const LOCK_KEY = 'channel-test:lock';
const PROGRESS_KEY = 'channel-test:progress';
/** The progress of the last run stays readable this long. */
const PROGRESS_TTL_SECONDS = 7 * 24 * 3600;

export interface ChannelTestServiceOptions {
  /** Bound of one test; default 60 s. */
  readonly timeoutMs?: number;
  /** Told about failures of background runs. */
  readonly onError?: (error: unknown) => void;
}

export function createChannelTestService(deps: AppDeps, options: ChannelTestServiceOptions = {}) {
  const box = createChannelKeyBox(deps.config.cryptoSecret);
  const repo = createChannelRepo(deps.db);
  const logRepo = createLogRepo(deps.db);
  const onError = options.onError ?? (() => {});
  const closing = new AbortController();
  const pauseMs = deps.config.pollingIntervalSeconds * 1000;
  // One channel's test plus the pause after it, with room to spare: a crashed run frees the lease after this.
  const leaseSeconds = Math.ceil(((options.timeoutMs ?? 60_000) + pauseMs) / 1000) * 2 + 60;
  let background: Promise<void> | undefined;
  // Root hears of automatic status changes and of finished runs (reference §9.5), in the background.
  const notifier = createNotifier({
    db: deps.db,
    options: (key) => deps.options.get(key),
    mailer: createSmtpMailer((key) => deps.options.get(key)),
    kv: deps.kv,
    log: { warn: (object, message) => onError(Object.assign(new Error(message), { cause: object })) },
  });

  /** The probe the server handed over; a process without one (an API alone in a test) cannot test channels. */
  function probeOf(): ChannelProbe {
    if (!deps.channelProbe)
      throw new AppError('FEATURE_DISABLED', 'channel tests are not available in this process', {
        status: 503,
      });
    return deps.channelProbe;
  }

  /** Writes a status change with the channel's abilities, then tells every process. */
  async function setStatus(channel: Channel, status: number, reason: string | undefined): Promise<void> {
    const patch: Partial<NewChannel> = {
      status,
      otherInfo:
        reason === undefined ? null : JSON.stringify({ status_reason: reason, status_time: nowSeconds() }),
    };
    await deps.db.transaction(async (tx) => {
      const row = await createChannelRepo(tx).update(channel.id, patch);
      if (row) await createAbilityRepo(tx).rebuild([row]);
    });
    await deps.bus.publish({ type: 'channels.changed', ids: [channel.id] });
    const what = status === ChannelStatus.Enabled ? 'enabled again' : 'disabled';
    notifier.notifyRoot({
      type: 'channel_update',
      title: `Channel "${channel.name}" (#${channel.id}) was ${what}`,
      content: `Channel "${channel.name}" (#${channel.id}) was ${what} automatically by a channel test.${reason ? ` Reason: ${reason}` : ''}`,
    });
  }

  /** The super administrator, in whose name tests are logged (the reference runs tests as user 1). */
  async function findRoot() {
    const [root] = await deps.db
      .select()
      .from(users)
      .where(and(gte(users.role, Role.Root), isNull(users.deletedAt)))
      .orderBy(asc(users.id))
      .limit(1);
    return root;
  }

  async function writeLog(channel: Channel, result: ChannelProbeSuccess) {
    if (!deps.options.get('LogConsumeEnabled')) return;
    const root = await findRoot();
    const group = root?.group ?? 'default';
    const { model, upstreamModel } = result;
    const pricing = resolvePricing({
      // The root user's group prices it, its own group prices (GroupModelRatio, ...) included, as the relay would.
      tables: priceTablesOf((key) => deps.options.get(key)),
      model,
      group,
      selfUseMode: deps.options.get('SelfUseModeEnabled'),
      acceptUnsetModelRatio: false,
      isRoot: true,
    });
    const { usage } = result;
    const other: Record<string, unknown> = {
      frt: result.elapsedMs,
      admin_info: { use_channel: [String(channel.id)] },
      channel_test: true,
    };
    let quota = 0;
    let content: string;
    if (isPricingRefusal(pricing)) {
      content = 'channel test; the model has no price, so no quota was computed';
    } else {
      quota = settleTokens(pricing, usage, deps.options.get('QuotaPerUnit')).quota;
      Object.assign(other, {
        model_ratio: pricing.kind === 'per-token' ? pricing.modelRatio : 0,
        group_ratio: pricing.groupRatio,
        completion_ratio: pricing.kind === 'per-token' ? pricing.completionRatio : 0,
        cache_tokens: usage.cachedTokens,
        cache_ratio: pricing.kind === 'per-token' ? pricing.cacheRatio : 0,
        model_price: pricing.kind === 'per-call' ? pricing.modelPrice : -1,
      });
      content = `${
        pricing.kind === 'per-token'
          ? `model ratio ${pricing.modelRatio.toFixed(2)}, completion ratio ${pricing.completionRatio.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`
          : `model price ${pricing.modelPrice.toFixed(2)}, group ratio ${pricing.groupRatio.toFixed(2)}`
      } (channel test: not charged)`;
    }
    if (upstreamModel !== model) {
      other.is_model_mapped = true;
      other.upstream_model_name = upstreamModel;
    }
    await logRepo.insert({
      userId: root?.id ?? 0,
      type: LogType.Consume,
      content,
      username: root?.username ?? '',
      tokenName: TEST_TOKEN_NAME,
      modelName: model,
      quota,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      useTime: Math.round(result.elapsedMs / 1000),
      isStream: false,
      channelId: channel.id,
      tokenId: 0,
      group,
      other: JSON.stringify(other),
    });
  }

  async function disableTestedKey(channelId: number, key: string, reason: string): Promise<void> {
    await changeKeyRing({ db: deps.db, bus: deps.bus, box }, channelId, (ring) => {
      const index = ring.keys.indexOf(key);
      if (index === -1) return { ring: undefined, result: undefined };
      const state = { status: KeyStatus.AutoDisabled, reason, time: nowSeconds() };
      return { ring: setKeyStates(ring, [index], state), result: undefined };
    });
  }

  /** Tests one channel and applies the result (see the file comment). */
  async function test(
    id: number,
    requestedModel?: string,
    signal?: AbortSignal,
  ): Promise<ChannelTestOutcome> {
    const channel = await repo.find(id);
    if (!channel) throw new AppError('NOT_FOUND', 'channel not found');
    const probe = probeOf();
    const untestable = await probe.untestableReason(channel.type);
    if (untestable) return { success: false, message: untestable, time: 0 };
    const cancelled = signal ? AbortSignal.any([signal, closing.signal]) : closing.signal;
    const result = await probe.probe(channel, {
      model: requestedModel,
      timeoutMs: options.timeoutMs,
      signal: cancelled,
    });
    const time = result.elapsedMs / 1000;
    // A test cut short by shutdown says nothing about the channel.
    if (cancelled.aborted) return { success: false, message: 'the test was cancelled', time };
    if (!result.ok && result.isLocal) return { success: false, message: result.message, time };
    await repo.update(channel.id, { responseTime: result.elapsedMs, testTime: nowSeconds() });

    const { options: opts } = deps;
    const isEnabled = channel.status === ChannelStatus.Enabled;
    if (!result.ok) {
      const reason = result.disableReason;
      if (reason !== undefined && isEnabled && result.multiKey !== undefined) {
        // A multi-key channel tests its first enabled key: that key goes, the channel goes only with its last.
        await disableTestedKey(channel.id, result.multiKey, reason);
        return { success: false, message: `${result.message} (the key was disabled)`, time };
      }
      if (reason !== undefined && isEnabled) {
        await setStatus(channel, ChannelStatus.AutoDisabled, reason);
        return { success: false, message: `${result.message} (the channel was disabled)`, time };
      }
      return { success: false, message: result.message, time };
    }

    await writeLog(channel, result);
    const threshold = opts.get('ChannelDisableThreshold');
    if (threshold > 0 && time > threshold) {
      const message = `response time ${time.toFixed(2)} s is over the threshold of ${threshold} s`;
      if (isEnabled && opts.get('AutomaticDisableChannelEnabled') && channel.autoBan === 1) {
        await setStatus(channel, ChannelStatus.AutoDisabled, message);
        return { success: false, message: `${message} (the channel was disabled)`, time };
      }
      // It answered: slow is worth saying, but it is not a failure unless it switched the channel off.
      return { success: true, message, time };
    }
    if (channel.status === ChannelStatus.AutoDisabled && opts.get('AutomaticEnableChannelEnabled')) {
      await setStatus(channel, ChannelStatus.Enabled, undefined);
      return { success: true, message: 'the channel was enabled again', time };
    }
    return { success: true, message: '', time };
  }

  async function readProgress(): Promise<TestAllProgress> {
    const text = await deps.kv.get(PROGRESS_KEY);
    if (!text) return IDLE;
    const saved = JSON.parse(text) as TestAllProgress;
    // A run whose process died keeps "running" in its record; its lease expiring says otherwise.
    if (saved.running && (await deps.kv.get(LOCK_KEY)) === undefined) return { ...saved, running: false };
    return saved;
  }

  const saveProgress = (progress: TestAllProgress) =>
    deps.kv.set(PROGRESS_KEY, JSON.stringify(progress), PROGRESS_TTL_SECONDS);

  /** Takes the lease of a run over every channel; false when another run holds it. */
  async function acquireLease(): Promise<boolean> {
    return (await deps.kv.incr(LOCK_KEY, leaseSeconds)) === 1;
  }

  /** Channels a run tests: those of a testable type, except the ones an operator switched off by hand. */
  async function channelsToTest(): Promise<Channel[]> {
    const probe = probeOf();
    const testable = await Promise.all(
      (await repo.all()).map(async (c) =>
        c.status !== ChannelStatus.ManuallyDisabled && (await probe.untestableReason(c.type)) === undefined
          ? c
          : undefined,
      ),
    );
    return testable.filter((c) => c !== undefined);
  }

  /** Runs over every channel (the lease is held); never throws. */
  async function runAll(signal: AbortSignal): Promise<void> {
    let progress: TestAllProgress = { ...IDLE, running: true, started_at: nowSeconds() };
    try {
      const list = await channelsToTest();
      progress = { ...progress, total: list.length };
      await saveProgress(progress);
      for (const [index, channel] of list.entries()) {
        if (signal.aborted) break;
        let success = false;
        try {
          success = (await test(channel.id, undefined, signal)).success;
        } catch (error) {
          if (!(error instanceof AppError && error.code === 'NOT_FOUND')) onError(error);
        }
        progress = { ...progress, done: progress.done + 1, failed: progress.failed + (success ? 0 : 1) };
        await saveProgress(progress);
        // Keeps the lease while the run lasts (it expires by itself if this process dies). The value stays a
        // number above 1, so another replica's INCR keeps failing to take it.
        await deps.kv.set(LOCK_KEY, '2', leaseSeconds);
        if (pauseMs > 0 && index < list.length - 1) await sleep(pauseMs, undefined, { signal });
      }
    } catch (error) {
      if (!signal.aborted) onError(error);
    } finally {
      await saveProgress({ ...progress, running: false, finished_at: nowSeconds() }).catch(onError);
      await deps.kv.del(LOCK_KEY).catch(onError);
      if (progress.total > 0)
        notifier.notifyRoot({
          type: 'channel_test',
          title: 'The test of all channels has finished',
          content: `Tested ${progress.done} of ${progress.total} channels: ${progress.done - progress.failed} answered, ${progress.failed} failed.`,
        });
    }
  }

  /** Starts a run in the background when no other run holds the lease; false otherwise. */
  async function startRun(): Promise<boolean> {
    if (closing.signal.aborted || background) return false;
    if (!(await acquireLease())) return false;
    const run = runAll(closing.signal).finally(() => {
      if (background === run) background = undefined;
    });
    background = run;
    return true;
  }

  return {
    test,

    /** `GET /api/channel/test`: starts a run over every channel and answers at once. */
    async startTestAll(): Promise<void> {
      probeOf();
      if (!(await startRun()))
        throw new AppError('CONFLICT', 'a test of all channels is already running; wait for it to finish');
    },

    progress: readProgress,

    /**
     * One periodic round (`CHANNEL_TEST_FREQUENCY`): replicas share a counter per period so only the first to
     * get there runs it; a run already going (started from the console) makes the round a no-op.
     */
    async runPeriodicRound(periodMs: number): Promise<boolean> {
      const period = Math.floor(Date.now() / periodMs);
      const ttl = Math.max(1, Math.ceil((periodMs * 2) / 1000));
      if ((await deps.kv.incr(`channel-test:round:${period}`, ttl)) !== 1) return false;
      if (!(await startRun())) return false;
      await background;
      return true;
    },

    /** Aborts a run in progress (tests in flight included) and waits for it; the server closes the probe. */
    async close(): Promise<void> {
      closing.abort();
      await background;
    },
  };
}

export type ChannelTestService = ReturnType<typeof createChannelTestService>;

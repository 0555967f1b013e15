import type { TokenUsage } from '../billing/settle.ts';
import type { Channel } from '../db/schema/channels.ts';

/**
 * The seam between the console API's channel test and the relay (docs/adr/0037): the API decides what a result
 * does to a channel (status, log, notices); the probe sends the call exactly as the relay would (the channel's
 * provider, credential, model mapping, proxy) and says what the relay's rule makes of a failure. The relay
 * implements it (relay/src/channel-probe.ts); the server hands it to the API, so the API never imports the relay.
 */
export interface ChannelProbe {
  /** Why channels of this type cannot be tested (task-only types, no provider yet); undefined when they can. */
  untestableReason(channelType: number): Promise<string | undefined>;
  /** Sends one test call to the channel (its first enabled key) and reads the whole answer; never throws for an upstream problem. */
  probe(channel: Channel, request: ChannelProbeRequest): Promise<ChannelProbeResult>;
  /** Closes the upstream connections. */
  close(): Promise<void>;
}

export interface ChannelProbeRequest {
  /** The model asked for; the channel's test model, then its first model, otherwise. */
  readonly model?: string | undefined;
  /** Bound of the whole test; the probe's default (60 s) otherwise. */
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export type ChannelProbeResult = ChannelProbeSuccess | ChannelProbeFailure;

interface ChannelProbeOutcome {
  /** The model named by the test (billing and the log use it). */
  readonly model: string;
  readonly elapsedMs: number;
  /** The key the test used when the channel holds several (multi-key), so a failure can disable that key alone. */
  readonly multiKey?: string | undefined;
}

export interface ChannelProbeSuccess extends ChannelProbeOutcome {
  readonly ok: true;
  /** The model sent upstream, after the channel's model mapping. */
  readonly upstreamModel: string;
  readonly usage: TokenUsage;
}

export interface ChannelProbeFailure extends ChannelProbeOutcome {
  readonly ok: false;
  /** Safe to show: keys and upstream addresses are redacted. */
  readonly message: string;
  /** The failure is ours (no key, an untestable type, a cancelled test), not the channel's. */
  readonly isLocal: boolean;
  /**
   * Why the relay would switch the channel off for this failure (a 401, a disabling error code or keyword) when
   * AutomaticDisableChannelEnabled is on and the channel's `auto_ban` is set; undefined otherwise.
   */
  readonly disableReason?: string | undefined;
}

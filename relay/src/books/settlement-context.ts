/**
 * What settlement (settle.ts) reads of the relay's context and of the call's payer: the balances (ledger), the
 * batched writer, the channels (a log names the channel's provider), the metrics and the dependencies. The
 * pipeline's context is one (pipeline/context.ts), so books never import the floor above them.
 */
import type { Hold, Ledger } from '@turnpike/core/billing/ledger';
import type { AllowanceTerms } from '@turnpike/core/plans/periods';
import type { RelayDeps } from '../deps.ts';
import type { CallerWindow } from '../limits/windows.ts';
import type { RelayMetrics } from '../metrics/relay-metrics.ts';
import type { ChannelCache } from '../state/channel-cache.ts';
import type { BatchWriter } from './writer.ts';

export interface SettlementContext {
  readonly deps: RelayDeps;
  readonly channels: ChannelCache;
  /** Balances requests are admitted against (holds and settlements), shared by every relay with Redis. */
  readonly ledger: Ledger;
  readonly writer: BatchWriter;
  /** Prometheus metrics: `recordCall` once per call that reached an upstream. */
  readonly metrics: RelayMetrics;
}

/** Who pays: the user always, and the token when its quota is limited; and the windows the call is held in. */
export interface Payer {
  readonly userId: number;
  readonly tokenId: number;
  readonly tokenUnlimited: boolean;
  /** The caller's quota windows (`callerWindows`); absent or empty: none. */
  readonly windows?: readonly CallerWindow[];
  /** The user's subscriptions, whose allowances pay before the wallet; absent or empty: none. */
  readonly allowances?: readonly AllowanceTerms[];
}

/** Whether a hold draws on the user's wallet (false: a plan's allowance pays it). */
export const drawsOnWallet = (hold: Hold): boolean => hold.accounts.some((account) => account[0] === 'u');

/**
 * The seam of asynchronous task providers (Midjourney-Proxy, Suno, video): one folder each under
 * tasks/, each giving its routes and one poll pass. Submits are billed and refunded through charge.ts and
 * finish.ts, so a new provider writes only its wire format, its routes and how to read its task states.
 */
import type { TaskCarried } from '@turnpike/core/providers/catalogue';
import type { FastifyInstance } from 'fastify';
import type { RelayContext } from '../pipeline/context.ts';

/** What one poll pass did, for logs and tests. */
export interface PollReport {
  /** Tasks asked about upstream. */
  readonly polled: number;
  /** Tasks that changed. */
  readonly updated: number;
  /** Tasks failed (by the upstream or by the time-out) and refunded by this pass. */
  readonly refunded: number;
  /** Quota given back by this pass. */
  readonly refundedQuota: number;
}

export const EMPTY_REPORT: PollReport = { polled: 0, updated: 0, refunded: 0, refundedQuota: 0 };

export const addReports = (a: PollReport, b: PollReport): PollReport => ({
  polled: a.polled + b.polled,
  updated: a.updated + b.updated,
  refunded: a.refunded + b.refunded,
  refundedQuota: a.refundedQuota + b.refundedQuota,
});

export interface PollSettings {
  /** Unix milliseconds the pass runs at (tests move it forward). */
  readonly now: number;
  /** An unfinished task older than this fails and is refunded. */
  readonly timeoutMs: number;
  /** Most unfinished tasks read per pass. */
  readonly batch: number;
}

export interface TaskProvider {
  readonly id: string;
  /** What its tasks are, as the catalogue says a channel type carries them. */
  readonly carries: TaskCarried;
  /** Channel types (catalogue values) that serve this provider's tasks: those the catalogue says carry them. */
  readonly channelTypes: readonly number[];
  /** Registers the provider's client routes on the relay. */
  register(app: FastifyInstance, ctx: RelayContext): void;
  /** Brings unfinished tasks up to date from their channels, one upstream call per channel. */
  poll(ctx: RelayContext, settings: PollSettings): Promise<PollReport>;
}

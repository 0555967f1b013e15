import { setTimeout as sleep } from 'node:timers/promises';
import { describeUnreachable, isDatabaseUnreachable } from './unreachable.ts';

/** What a process waiting for its database is told, once per change (not once per try). */
export type WaitState =
  | { readonly state: 'waiting'; readonly reason: string; readonly error: unknown; readonly attempt: number }
  | { readonly state: 'available'; readonly attempts: number; readonly waitedMs: number };

export interface WaitForDatabaseOptions {
  /** Which failures are worth waiting out; default: the database is unreachable (`isDatabaseUnreachable`). */
  readonly isRetryable?: (error: unknown) => boolean;
  /** Told when the process starts waiting, when the reason changes, and when the database answers again. */
  readonly onStateChange?: (state: WaitState) => void;
  /** First pause between tries; doubled each time up to `maxDelayMs`, with jitter. */
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Stops waiting (a signal asked the process to stop): the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `attempt` until it succeeds, waiting with backoff while it fails because the database is unreachable: a
 * process started during an outage waits for the database instead of exiting (a crash loop in Kubernetes). Any
 * other failure (a wrong password, a migration that does not apply) is thrown at once: that is a
 * misconfiguration to fix, not an outage to wait out.
 */
export async function waitForDatabase<T>(
  attempt: () => Promise<T>,
  options: WaitForDatabaseOptions = {},
): Promise<T> {
  const {
    isRetryable = isDatabaseUnreachable,
    onStateChange = () => {},
    minDelayMs = 250,
    maxDelayMs = 5_000,
    signal,
  } = options;
  const startedAt = Date.now();
  let attempts = 0;
  let lastReason: string | undefined;
  let delay = minDelayMs;
  for (;;) {
    signal?.throwIfAborted();
    attempts += 1;
    try {
      const result = await attempt();
      if (lastReason !== undefined)
        onStateChange({ state: 'available', attempts, waitedMs: Date.now() - startedAt });
      return result;
    } catch (error) {
      if (!isRetryable(error)) throw error;
      const reason = describeUnreachable(error);
      if (reason !== lastReason) {
        lastReason = reason;
        onStateChange({ state: 'waiting', reason, error, attempt: attempts });
      }
    }
    // Full jitter over the upper half, so replicas started together do not knock in step.
    await sleep(delay / 2 + Math.random() * (delay / 2), undefined, signal ? { signal } : {}).catch(
      (error: unknown) => {
        throw signal?.aborted ? signal.reason : error;
      },
    );
    delay = Math.min(maxDelayMs, delay * 2);
  }
}

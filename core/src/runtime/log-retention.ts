import { createLogRepo, USAGE_LOG_TYPES } from '@turnpike/core/repos/log.repo';
import { purgeGovernanceRows } from './governance-retention.ts';
import type { RuntimeDeps } from './runtime.ts';

const DAY_SECONDS = 24 * 3600;
/** Once a day is enough for a limit counted in days; a purge also runs at every boot. */
export const LOG_RETENTION_INTERVAL_MS = DAY_SECONDS * 1000;

/**
 * Deletes usage logs (consume and error rows) older than LogRetentionDays days before `now`; 0 keeps every
 * log. Top-up, admin and system rows are kept: they are few and are the account's history. Answers how many
 * rows went. Safe to run on every replica at once: a row can only be deleted once.
 */
export async function purgeOldLogs(
  deps: Pick<RuntimeDeps, 'db' | 'options'>,
  now: Date = new Date(),
): Promise<number> {
  const days = deps.options.get('LogRetentionDays');
  if (days <= 0) return 0;
  const cutoff = Math.floor(now.getTime() / 1000) - days * DAY_SECONDS;
  return createLogRepo(deps.db).deleteBefore(cutoff, { types: USAGE_LOG_TYPES });
}

export interface LogRetentionOptions {
  intervalMs?: number;
  /** Told about a failed purge; the next run tries again. */
  onError?: (error: unknown) => void;
  /** Told how many rows a purge removed, when it removed any. */
  onPurged?: (count: number) => void;
}

/**
 * Runs `purgeOldLogs` once now and then every `intervalMs`. Returns the stop function, which waits for a
 * purge in progress to finish (so shutdown can close the database afterwards).
 */
export function startLogRetention(
  deps: Pick<RuntimeDeps, 'db' | 'options'>,
  options: LogRetentionOptions = {},
): () => Promise<void> {
  const { intervalMs = LOG_RETENTION_INTERVAL_MS, onError = () => {}, onPurged = () => {} } = options;
  let running: Promise<void> | undefined;
  let stopped = false;

  function run(): void {
    if (running || stopped) return;
    running = purgeOldLogs(deps)
      .then(async (count) => count + (await purgeGovernanceRows(deps)))
      .then((count) => {
        if (count > 0) onPurged(count);
      })
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }

  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

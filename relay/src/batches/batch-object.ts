/** A batch row as OpenAI's batch object (https://platform.openai.com/docs/api-reference/batch/object). */
import { randomBytes } from 'node:crypto';
import type { Batch } from '@turnpike/core/db/schema/index';

export const newBatchId = (): string => `batch_${randomBytes(16).toString('hex')}`;

/** Statuses after which nothing changes. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'expired', 'cancelled']);

export const isFinal = (status: string): boolean => FINAL_STATUSES.has(status);

export function toBatchObject(row: Batch) {
  return {
    id: row.id,
    object: 'batch' as const,
    endpoint: row.endpoint,
    model: row.model,
    errors: row.errors ?? null,
    input_file_id: row.inputFileId,
    completion_window: row.completionWindow,
    status: row.status,
    output_file_id: row.outputFileId ?? null,
    error_file_id: row.errorFileId ?? null,
    created_at: row.createdAt,
    in_progress_at: row.inProgressAt ?? null,
    expires_at: row.expiresAt,
    finalizing_at: row.finalizingAt ?? null,
    completed_at: row.completedAt ?? null,
    failed_at: row.failedAt ?? null,
    expired_at: row.expiredAt ?? null,
    cancelling_at: row.cancellingAt ?? null,
    cancelled_at: row.cancelledAt ?? null,
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata ?? null,
  };
}

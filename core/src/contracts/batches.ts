/**
 * The console's batches page (`GET /api/batch/self`, `GET /api/batch/` for administrators) and the downloads of a
 * batch's output and error files (docs/adr/0050). Lists page from 0, as the task logs do.
 */
import { z } from 'zod';
import type { Batch } from '../db/schema/batches.ts';
import { queryInt, queryText } from './logs.ts';
import { taskPage } from './tasks.ts';

export const selfBatchQuerySchema = z.object({ ...taskPage, status: queryText('status', 16) });
export type SelfBatchQuery = z.infer<typeof selfBatchQuerySchema>;
export const adminBatchQuerySchema = selfBatchQuerySchema.extend({
  user_id: queryInt('user_id', 'a user id (a whole number)'),
});
export type AdminBatchQuery = z.infer<typeof adminBatchQuerySchema>;

/** A batch as the console shows it; `cost` is what its lines were billed (quota), `held` what was held. */
export interface BatchView {
  id: string;
  user_id: number;
  username: string;
  model: string;
  endpoint: string;
  /** `openai`, `anthropic` (the provider's Batch API, at its batch price) or `gateway` (run by the gateway). */
  mode: string;
  status: string;
  total: number;
  completed: number;
  failed: number;
  held: number;
  cost: number;
  settled: boolean;
  input_file_id: string;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  completed_at: number | null;
  /** Administrators only. */
  channel_id?: number;
}

export function toBatchView(row: Batch, options: { admin: boolean }): BatchView {
  return {
    id: row.id,
    user_id: row.userId,
    username: row.username,
    model: row.model,
    endpoint: row.endpoint,
    mode: row.mode,
    status: row.status,
    total: row.total,
    completed: row.completed,
    failed: row.failed,
    held: row.held,
    cost: row.charged,
    settled: row.settledAt > 0,
    input_file_id: row.inputFileId,
    output_file_id: row.outputFileId ?? null,
    error_file_id: row.errorFileId ?? null,
    created_at: row.createdAt,
    completed_at: row.completedAt ?? row.cancelledAt ?? row.failedAt ?? row.expiredAt ?? null,
    ...(options.admin ? { channel_id: row.channelId } : {}),
  };
}

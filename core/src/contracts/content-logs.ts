import { z } from 'zod';
import type { ContentLog } from '../db/schema/content-logs.ts';

/** `PUT /api/token/:id/content_log`: whether the token's calls keep their prompt and answer. */
export const contentLogSwitchSchema = z.object({
  enabled: z.boolean({ error: 'enabled must be true or false' }),
});

/** `GET /api/token/:id/content_log`. */
export interface ContentLogSwitch {
  token_id: number;
  enabled: boolean;
}

/** The content of one call as the log detail shows it (already redacted and cut when it was written). */
export interface ContentLogView {
  request_id: string;
  created_at: number;
  model_name: string;
  prompt: string;
  answer: string;
  truncated: boolean;
  redactions: number;
}

export function toContentLogView(row: ContentLog): ContentLogView {
  return {
    request_id: row.requestId,
    created_at: row.createdAt,
    model_name: row.modelName,
    prompt: row.prompt,
    answer: row.answer,
    truncated: row.truncated,
    redactions: row.redactions,
  };
}

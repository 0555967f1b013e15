import type { ContentLogView } from '@turnpike/core/contracts/content-logs';
import { api } from '../../../lib/api.ts';

/** The prompt and answer a call kept (content logs, docs/adr/0045); not found when it kept none. */
export const fetchLogContent = (requestId: string) =>
  api.get<ContentLogView>(`/api/log/content/${encodeURIComponent(requestId)}`, { silent: true });

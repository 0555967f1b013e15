import type { BatchView } from '@turnpike/core/contracts/batches';
import { api } from '../../../lib/api.ts';
import { getSessionUser } from '../../../lib/session.ts';

/** A batch as GET /api/batch/ (admin, with `channel_id`) or /api/batch/self answers; times in seconds. */
export type BatchRow = BatchView;

/** One server page (counted from 0) of batches; a page shorter than `pageSize` is the last one. */
export function fetchBatches(admin: boolean, status: string, page: number, pageSize: number) {
  return api.get<BatchRow[]>(admin ? '/api/batch/' : '/api/batch/self', {
    query: { status: status || undefined, p: page, page_size: pageSize },
  });
}

/** Saves a batch's output or error file: fetched with the session's headers, handed to the browser as a file. */
export async function downloadBatchFile(admin: boolean, fileId: string, filename: string): Promise<void> {
  const user = getSessionUser();
  const response = await fetch(
    `${admin ? '/api/batch/file/' : '/api/batch/self/file/'}${encodeURIComponent(fileId)}`,
    {
      credentials: 'same-origin',
      headers: user ? { 'New-Api-User': String(user.id) } : {},
    },
  );
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  URL.revokeObjectURL(url);
}

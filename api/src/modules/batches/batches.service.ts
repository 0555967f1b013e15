import {
  type AdminBatchQuery,
  type BatchView,
  type SelfBatchQuery,
  toBatchView,
} from '@turnpike/core/contracts/batches';
import type { User } from '@turnpike/core/db/schema/users';
import { AppError } from '@turnpike/core/errors';
import { openFileStore } from '@turnpike/core/files/store';
import { createBatchRepo } from '@turnpike/core/repos/batch.repo';
import type { AppDeps } from '../../deps.ts';

/** The batches page: administrators see every batch, users their own; and the downloads of their files. */
export function createBatchesService(deps: AppDeps) {
  const repo = createBatchRepo(deps.db);
  const store = openFileStore(deps.config, deps.db);

  async function list(
    query: SelfBatchQuery & { user_id?: number | undefined },
    scope: { user?: User },
  ): Promise<BatchView[]> {
    const rows = await repo.list(
      { userId: scope.user?.id ?? query.user_id, status: query.status },
      { offset: query.p * query.page_size, limit: query.page_size },
    );
    return rows.map((row) => toBatchView(row, { admin: !scope.user }));
  }

  /** A file's name and bytes; another user's file is not found, as one that never existed. */
  async function download(id: string, scope: { user?: User }) {
    const file = await repo.file(id, scope.user?.id);
    const content = file && (await store.get(file.id));
    if (!file || !content) throw new AppError('NOT_FOUND', 'no such file');
    return { filename: file.filename, content };
  }

  return {
    listAll: (query: AdminBatchQuery) => list(query, {}),
    listOwn: (user: User, query: SelfBatchQuery) => list(query, { user }),
    downloadAny: (id: string) => download(id, {}),
    downloadOwn: (user: User, id: string) => download(id, { user }),
  };
}

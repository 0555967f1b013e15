/**
 * Content logs as the console reads and switches them (docs/adr/0045): a call's prompt and answer for its log's
 * detail (administrators see every call's, a user only their own), and the switch of one token.
 */
import type { ContentLogSwitch, ContentLogView } from '@turnpike/core/contracts/content-logs';
import { toContentLogView } from '@turnpike/core/contracts/content-logs';
import { tokens } from '@turnpike/core/db/schema/tokens';
import type { User } from '@turnpike/core/db/schema/users';
import { isAdmin } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createContentLogRepo } from '@turnpike/core/repos/content-log.repo';
import { and, eq, isNull } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';

const noContent = () => new AppError('NOT_FOUND', 'no content log for this request');
const noToken = () => new AppError('NOT_FOUND', 'token not found');

export function createContentLogService(deps: AppDeps) {
  const repo = createContentLogRepo(deps.db);

  /** A live token, of `ownerId` unless undefined (an administrator's switch). */
  async function tokenOf(id: number, ownerId: number | undefined) {
    const [row] = await deps.db
      .select({ id: tokens.id, userId: tokens.userId })
      .from(tokens)
      .where(
        and(
          eq(tokens.id, id),
          isNull(tokens.deletedAt),
          ownerId === undefined ? undefined : eq(tokens.userId, ownerId),
        ),
      )
      .limit(1);
    if (!row) throw noToken();
    return row;
  }

  return {
    /** The content of a call: an administrator's for any call, a user's for their own only (else not found). */
    async read(viewer: User, requestId: string): Promise<ContentLogView> {
      const row = await repo.findByRequestId(requestId);
      if (!row || (!isAdmin(viewer.role) && row.userId !== viewer.id)) throw noContent();
      return toContentLogView(row);
    },

    async switchOf(id: number, ownerId: number | undefined): Promise<ContentLogSwitch> {
      await tokenOf(id, ownerId);
      return { token_id: id, enabled: (await repo.tokensOn([id])).length > 0 };
    },

    /** Turns content logs on or off for a token; every relay follows within the event's round trip. */
    async setSwitch(
      id: number,
      ownerId: number | undefined,
      enabled: boolean,
      by: User,
    ): Promise<ContentLogSwitch> {
      await tokenOf(id, ownerId);
      await repo.setToken(id, enabled, by.id);
      await deps.bus.publish({ type: 'tokens.changed', ids: [id] });
      return { token_id: id, enabled };
    },
  };
}

import type { CreateRedemption, UpdateRedemption } from '@turnpike/core/contracts/redemptions';
import type { NewRedemption, Redemption } from '@turnpike/core/db/schema/redemptions';
import type { User } from '@turnpike/core/db/schema/users';
import { generateRedemptionKey, RedemptionStatus } from '@turnpike/core/domain/redemptions';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createRedemptionRepo } from '@turnpike/core/repos/redemption.repo';
import type { AppDeps } from '../../deps.ts';

const notFound = () => new AppError('NOT_FOUND', 'redemption code not found');

/** Admin management of redemption codes. */
export function createRedemptionService(deps: AppDeps) {
  const repo = createRedemptionRepo(deps.db);

  async function get(id: number): Promise<Redemption> {
    const row = await repo.find(id);
    if (!row) throw notFound();
    return row;
  }

  return {
    list: (page: number, size: number) => repo.list(page, size),
    search: (keyword: string, page: number, size: number) => repo.search(keyword, page, size),
    get,

    /** Creates `count` codes at once and answers their keys. */
    async create(admin: User, input: CreateRedemption): Promise<string[]> {
      const now = nowSeconds();
      const rows = await repo.insertMany(
        Array.from({ length: input.count }, () => ({
          userId: admin.id,
          key: generateRedemptionKey(),
          name: input.name,
          quota: input.quota,
          status: RedemptionStatus.Unused,
          createdTime: now,
        })),
      );
      return rows.map((row) => row.key);
    },

    /** A used code is final: it can be neither edited nor switched on or off. */
    async update(input: UpdateRedemption, statusOnly: boolean): Promise<Redemption> {
      const current = await get(input.id);
      if (current.status === RedemptionStatus.Used)
        throw new AppError(
          'VALIDATION_FAILED',
          'this redemption code has been used and can no longer be changed',
        );
      const patch: Partial<NewRedemption> = {};
      if (!statusOnly) {
        if (input.name !== undefined) patch.name = input.name;
        if (input.quota !== undefined) patch.quota = input.quota;
      }
      if (input.status !== undefined) patch.status = input.status;
      if (Object.keys(patch).length === 0) return current;
      const updated = await repo.update(input.id, patch);
      if (!updated) throw notFound();
      return updated;
    },

    async delete(id: number): Promise<void> {
      if (!(await repo.delete(id))) throw notFound();
    },
  };
}

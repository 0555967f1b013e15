import {
  type CreateToken,
  type TokenView,
  toTokenView,
  type UpdateToken,
} from '@turnpike/core/contracts/tokens';
import type { NewToken, Token } from '@turnpike/core/db/schema/tokens';
import type { User } from '@turnpike/core/db/schema/users';
import { usableGroups } from '@turnpike/core/domain/groups';
import { generateTokenKey, stripTokenKey, TokenStatus, whyCannotEnable } from '@turnpike/core/domain/tokens';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createTokenRepo } from '@turnpike/core/repos/token.repo';
import type { AppDeps } from '../../deps.ts';
import { createQuotaWindowService } from '../quota-windows/quota-windows.service.ts';

const notFound = () => new AppError('NOT_FOUND', 'token not found');

/** A user's own API tokens. Another user's token is indistinguishable from a missing one (404). */
export function createTokenService(deps: AppDeps) {
  const repo = createTokenRepo(deps.db);
  const windows = createQuotaWindowService(deps);
  const changed = (id: number) => deps.bus.publish({ type: 'tokens.changed', ids: [id] });

  function checkGroup(user: User, group: string | undefined): void {
    if (!group) return;
    const allowed = usableGroups(
      deps.options.get('UserUsableGroups'),
      deps.options.get('GroupRatio'),
      user.group,
    );
    if (!allowed[group]) throw new AppError('VALIDATION_FAILED', `you cannot use the group "${group}"`);
  }

  async function owned(user: User, id: number): Promise<Token> {
    const token = await repo.find(user.id, id);
    if (!token) throw notFound();
    return token;
  }

  return {
    /** The token as its owner reads it, with what each of its quota windows has spent. */
    view: async (token: Token): Promise<TokenView> => toTokenView(token, await windows.ofToken(token)),

    list: (user: User, page: number, size: number) => repo.list(user.id, page, size),

    search: (user: User, query: { keyword: string; token: string }, page: number, size: number) =>
      repo.search(user.id, { keyword: query.keyword, key: stripTokenKey(query.token) }, page, size),

    get: owned,

    async create(user: User, input: CreateToken): Promise<Token> {
      checkGroup(user, input.group);
      const token = await repo.insert({
        userId: user.id,
        key: generateTokenKey(),
        name: input.name,
        status: TokenStatus.Enabled,
        createdTime: nowSeconds(),
        accessedTime: nowSeconds(),
        expiredTime: input.expired_time,
        remainQuota: input.remain_quota,
        unlimitedQuota: input.unlimited_quota,
        modelLimitsEnabled: input.model_limits_enabled,
        modelLimits: input.model_limits,
        allowIps: input.allow_ips,
        group: input.group,
        rpmLimit: input.rpm_limit,
        tpmLimit: input.tpm_limit,
        concurrencyLimit: input.concurrency_limit,
        quotaWindows: input.quota_windows,
      });
      await changed(token.id);
      return token;
    },

    /**
     * A full edit, or a status-only one. Turning a token on is refused while its (new) expiry has passed or its
     * (new) quota is used up, so the console never shows an enabled token the relay would reject.
     */
    async update(user: User, input: UpdateToken, statusOnly: boolean): Promise<Token> {
      const current = await owned(user, input.id);
      const patch: Partial<NewToken> = {};
      if (!statusOnly) {
        checkGroup(user, input.group);
        if (input.name !== undefined) patch.name = input.name;
        if (input.remain_quota !== undefined) patch.remainQuota = input.remain_quota;
        if (input.expired_time !== undefined) patch.expiredTime = input.expired_time;
        if (input.unlimited_quota !== undefined) patch.unlimitedQuota = input.unlimited_quota;
        if (input.model_limits_enabled !== undefined) patch.modelLimitsEnabled = input.model_limits_enabled;
        if (input.model_limits !== undefined) patch.modelLimits = input.model_limits;
        if (input.allow_ips !== undefined) patch.allowIps = input.allow_ips;
        if (input.group !== undefined) patch.group = input.group;
        if (input.rpm_limit !== undefined) patch.rpmLimit = input.rpm_limit;
        if (input.tpm_limit !== undefined) patch.tpmLimit = input.tpm_limit;
        if (input.concurrency_limit !== undefined) patch.concurrencyLimit = input.concurrency_limit;
        // A window only limits the token, so its owner may set them; the relay reads them on tokens.changed.
        if (input.quota_windows !== undefined) patch.quotaWindows = input.quota_windows;
      }
      if (input.status !== undefined) patch.status = input.status;
      if (patch.status === TokenStatus.Enabled && current.status !== TokenStatus.Enabled) {
        const why = whyCannotEnable(
          {
            expiredTime: patch.expiredTime ?? current.expiredTime,
            remainQuota: patch.remainQuota ?? current.remainQuota,
            unlimitedQuota: patch.unlimitedQuota ?? current.unlimitedQuota,
          },
          nowSeconds(),
        );
        if (why) throw new AppError('VALIDATION_FAILED', why);
      }
      if (Object.keys(patch).length === 0) return current;
      const updated = await repo.update(user.id, input.id, patch);
      if (!updated) throw notFound();
      await changed(updated.id);
      return updated;
    },

    async delete(user: User, id: number): Promise<void> {
      if (!(await repo.delete(user.id, id))) throw notFound();
      await changed(id);
    },
  };
}

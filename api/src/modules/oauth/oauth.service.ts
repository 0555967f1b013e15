/**
 * What a verified third-party identity does (reference §9.7):
 * - with a signed-in user in the session, it is bound to that user (unless another user holds it);
 * - otherwise the user holding it is signed in; a deregistered or disabled holder is refused;
 * - otherwise, when registration is open, a new user is made for it (with the new-user and invite bonuses);
 *   Telegram never registers: its sign-in is only for accounts that bound it before.
 */
import { DISPLAY_NAME_MAX } from '@turnpike/core/contracts/users';
import { hashPassword } from '@turnpike/core/crypto/password';
import { randomString } from '@turnpike/core/crypto/random';
import { users } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { UserStatus } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { eq, max } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { createAuthService } from '../auth/auth.service.ts';
import type { Identity } from './identity-providers.ts';

/** Usernames the sign-in suggests are used only when they would pass registration's own rule. */
const SUGGESTED_USERNAME = /^[A-Za-z0-9_.-]{1,12}$/;

export function createOAuthService(deps: AppDeps) {
  const repo = createUserRepo(deps.db);
  const auth = createAuthService(deps);

  /** The user holding this identity, deregistered ones included (their identity stays theirs). */
  async function holderOf(identity: Identity): Promise<User | undefined> {
    const [row] = await deps.db.select().from(users).where(eq(users[identity.column], identity.id)).limit(1);
    return row;
  }

  async function bind(userId: number, identity: Identity): Promise<User> {
    const user = await repo.findById(userId);
    if (!user) throw new AppError('UNAUTHENTICATED', 'not signed in or the session has expired');
    if (user.status !== UserStatus.Enabled)
      throw new AppError('USER_DISABLED', 'this user has been disabled');
    const holder = await holderOf(identity);
    if (holder && holder.id !== userId) {
      throw new AppError('CONFLICT', `this ${identity.provider} account is already bound to another user`);
    }
    return (await repo.update(userId, { [identity.column]: identity.id })) ?? user;
  }

  /** A free username: the provider's suggestion when it is valid and free, else `<prefix>_<next id>`. */
  async function freeUsername(identity: Identity): Promise<string> {
    if (
      identity.username &&
      SUGGESTED_USERNAME.test(identity.username) &&
      !(await repo.isUsernameTaken(identity.username))
    ) {
      return identity.username;
    }
    const [row] = await deps.db.select({ top: max(users.id) }).from(users);
    for (let next = (row?.top ?? 0) + 1; ; next += 1) {
      const name = `${identity.prefix}_${next}`;
      if (!(await repo.isUsernameTaken(name))) return name;
    }
  }

  async function register(identity: Identity, affCode: string | undefined): Promise<User> {
    if (!deps.options.get('RegisterEnabled')) {
      throw new AppError('FEATURE_DISABLED', 'new registrations are closed');
    }
    const email = identity.email && !(await repo.isEmailTaken(identity.email)) ? identity.email : '';
    const username = await freeUsername(identity);
    // No password is ever given out: the account signs in through the provider until the user sets one.
    const password = await hashPassword(randomString(32));
    return auth.createUser(
      {
        username,
        password,
        displayName: (identity.displayName ?? username).slice(0, DISPLAY_NAME_MAX),
        email,
        [identity.column]: identity.id,
      },
      affCode,
    );
  }

  return {
    /** Binds the identity to a signed-in user, unless another user holds it. */
    bind,

    /**
     * The user holding the identity, refused when deregistered or disabled; without one, a new user made for
     * it when `register` (and registration is open), with `affCode`'s inviter.
     */
    async signIn(
      identity: Identity,
      { register: mayRegister, affCode }: { register: boolean; affCode?: string },
    ) {
      const holder = await holderOf(identity);
      if (holder) {
        if (holder.deletedAt) throw new AppError('USER_DISABLED', 'this account has been deregistered');
        if (holder.status !== UserStatus.Enabled)
          throw new AppError('USER_DISABLED', 'this user has been disabled');
        return holder;
      }
      if (!mayRegister) {
        throw new AppError(
          'NOT_FOUND',
          `no user has bound this ${identity.provider} account; sign in another way and bind it first`,
        );
      }
      return register(identity, affCode);
    },
  };
}

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
import { and, eq, max, ne } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { createAuthService } from '../auth/auth.service.ts';
import type { Identity } from './identity-providers.ts';

export type OAuthOutcome =
  | { readonly kind: 'signed-in'; readonly user: User }
  | { readonly kind: 'bound'; readonly user: User };

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
    const [other] = await deps.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users[identity.column], identity.id), ne(users.id, userId)))
      .limit(1);
    if (other) {
      throw new AppError('CONFLICT', `this ${identity.provider} account is already bound to another user`);
    }
    const updated = await repo.update(userId, { [identity.column]: identity.id });
    if (!updated) throw new AppError('UNAUTHENTICATED', 'not signed in or the session has expired');
    return updated;
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
    const email = identity.email && !(await repo.isEmailTaken(identity.email)) ? identity.email : undefined;
    const username = await freeUsername(identity);
    // No password is ever given out: the account signs in through the provider until the user sets one.
    const password = await hashPassword(randomString(32));
    return auth.createUser(
      {
        username,
        password,
        displayName: (identity.displayName ?? username).slice(0, DISPLAY_NAME_MAX),
        email: email ?? '',
        [identity.column]: identity.id,
      },
      affCode,
    );
  }

  return {
    /**
     * Signs in, registers or binds (see the module comment). `sessionUserId` is the session's signed-in user;
     * `affCode` the invite code the session kept from `/api/oauth/state?aff=`.
     */
    async complete(
      identity: Identity,
      sessionUserId: number | undefined,
      affCode: string | undefined,
      mayRegister = true,
    ): Promise<OAuthOutcome> {
      if (sessionUserId) return { kind: 'bound', user: await bind(sessionUserId, identity) };
      const holder = await holderOf(identity);
      if (holder) {
        if (holder.deletedAt) throw new AppError('USER_DISABLED', 'this account has been deregistered');
        if (holder.status !== UserStatus.Enabled)
          throw new AppError('USER_DISABLED', 'this user has been disabled');
        return { kind: 'signed-in', user: holder };
      }
      if (!mayRegister) {
        throw new AppError(
          'NOT_FOUND',
          `no user has bound this ${identity.provider} account; sign in another way and bind it first`,
        );
      }
      return { kind: 'signed-in', user: await register(identity, affCode) };
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;

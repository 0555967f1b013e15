import type { User } from '@turnpike/core/db/schema/users';
import { Role, UserStatus } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { isSessionLive } from '@turnpike/core/sessions/session-end';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppDeps } from '../deps.ts';
import { createEnrolmentCheck } from '../modules/two-factor/admin-enrolment.ts';
import { readSession, type SessionCodec } from './session.ts';

export interface AuthContext {
  readonly user: User;
  readonly viaAccessToken: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

/** The signed-in user of a request the `requireRole` gate has let through. */
export function currentUser(request: FastifyRequest): User {
  if (!request.auth) throw new AppError('UNAUTHENTICATED', 'not signed in');
  return request.auth.user;
}

function readAccessToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization?.trim();
  if (!header) return undefined;
  return header.replace(/^Bearer\s+/i, '').trim() || undefined;
}

const SESSION_ENDED = 'your session has ended (signed out, or the account changed); sign in again';

/**
 * Console authentication: the session cookie or a system access token in `Authorization`, always with the
 * `New-Api-User` header naming the same user id. Role, status and whether the session has been ended
 * (docs/adr/0020) come from the user's row, read from the database on every call.
 */
export function createAuthGate(deps: AppDeps, codec: SessionCodec) {
  const repo = createUserRepo(deps.db);
  const enrolment = createEnrolmentCheck(deps);

  async function authenticate(request: FastifyRequest): Promise<AuthContext> {
    const session = readSession(request, codec);
    let user: User | undefined;
    let viaAccessToken = false;
    if (session.uid) {
      user = await repo.findById(session.uid);
      if (!user) throw new AppError('UNAUTHENTICATED', 'not signed in or the session has expired');
    } else {
      const token = readAccessToken(request);
      if (!token) throw new AppError('UNAUTHENTICATED', 'not signed in and no access token given');
      user = await repo.findByAccessToken(token);
      if (!user) throw new AppError('UNAUTHENTICATED', 'the access token is invalid');
      viaAccessToken = true;
    }
    const claimed = request.headers['new-api-user'];
    if (claimed === undefined || claimed === '') {
      throw new AppError('UNAUTHENTICATED', 'the New-Api-User header is required');
    }
    if (!/^\d+$/.test(String(claimed)))
      throw new AppError('UNAUTHENTICATED', 'the New-Api-User header must be a user id');
    if (Number(claimed) !== user.id) {
      throw new AppError('UNAUTHENTICATED', 'the New-Api-User header does not match the signed-in user');
    }
    if (user.status !== UserStatus.Enabled)
      throw new AppError('USER_DISABLED', 'this user has been disabled');
    if (!viaAccessToken && !isSessionLive(session, user))
      throw new AppError('UNAUTHENTICATED', SESSION_ENDED);
    return { user, viaAccessToken };
  }

  return {
    authenticate,
    /**
     * A preHandler that admits users of at least `minRole`. The handler carries its `minRole` so a route's gate
     * can be read back from the route table (see `gateRoleOf`).
     */
    requireRole(minRole: number = Role.User): RoleGate {
      const gate: preHandlerAsyncHookHandler = async (request) => {
        const auth = await authenticate(request);
        if (auth.user.role < minRole)
          throw new AppError('FORBIDDEN', 'you do not have permission to do this');
        // AdminTwoFactorRequired: an administrator without a second factor may only enrol (docs/adr/0044).
        await enrolment(request, auth.user);
        request.auth = auth;
      };
      return Object.assign(gate, { minRole });
    },
    /**
     * The user of this request's session while it is live, else undefined; never fails (for public routes that
     * personalise, and the third-party callbacks that bind an account to the signed-in user).
     */
    async tryUser(request: FastifyRequest): Promise<User | undefined> {
      const session = readSession(request, codec);
      if (!session.uid) return undefined;
      const user = await repo.findById(session.uid);
      return user && isSessionLive(session, user) ? user : undefined;
    },
  };
}
export type AuthGate = ReturnType<typeof createAuthGate>;

/** A `requireRole` preHandler, labelled with the least role it admits. */
export type RoleGate = preHandlerAsyncHookHandler & { readonly minRole: number };

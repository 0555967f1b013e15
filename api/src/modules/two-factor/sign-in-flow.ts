/**
 * The state between a right password and the second step, for a user with a second factor: sealed with
 * SESSION_SECRET into a token any replica can open, answered as `flow_token` (new-api's shape) and set as an
 * httpOnly cookie for the browser. It names the user and the session generation of the password step, so a
 * changed password, a reset factor or a disabled account ends it; it lives five minutes. It grants nothing alone:
 * the second step still needs a code or a passkey, each of which works once.
 */

import { createSealedBox } from '@turnpike/core/crypto/sealed-box';
import type { User } from '@turnpike/core/db/schema/users';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const FLOW_COOKIE = 'two_factor_flow';
export const FLOW_TTL_SECONDS = 300;
/** The sign-in routes that read the cookie: `/api/user/login/2fa` and `/api/user/passkey/login/*`. */
const FLOW_COOKIE_PATH = '/api/user';

interface Flow {
  uid: number;
  gen: number;
  exp: number;
}

export function createSignInFlows(sessionSecret: string) {
  const box = createSealedBox(sessionSecret, 'turnpike two-factor flow v1');
  return {
    /** Starts the second step for `user`: the token, its expiry, and the browser's cookie. */
    begin(request: FastifyRequest, reply: FastifyReply, user: Pick<User, 'id' | 'sessionGeneration'>) {
      const expiresAt = Math.floor(Date.now() / 1000) + FLOW_TTL_SECONDS;
      const token = box.seal(JSON.stringify({ uid: user.id, gen: user.sessionGeneration, exp: expiresAt }));
      reply.setCookie(FLOW_COOKIE, token, {
        path: FLOW_COOKIE_PATH,
        httpOnly: true,
        sameSite: 'strict',
        secure: request.protocol === 'https',
        maxAge: FLOW_TTL_SECONDS,
      });
      return { token, expiresAt };
    },
    /** The user and generation of a live flow, from the body's token or else the cookie; undefined otherwise. */
    read(request: FastifyRequest, bodyToken: string | undefined): { uid: number; gen: number } | undefined {
      const token = bodyToken || request.cookies[FLOW_COOKIE];
      if (!token) return undefined;
      const text = box.open(token);
      if (!text) return undefined;
      try {
        const flow = JSON.parse(text) as Flow;
        if (typeof flow.uid !== 'number' || typeof flow.gen !== 'number') return undefined;
        if (!(flow.exp > Date.now() / 1000)) return undefined;
        return { uid: flow.uid, gen: flow.gen };
      } catch {
        return undefined;
      }
    },
    end(reply: FastifyReply) {
      reply.clearCookie(FLOW_COOKIE, { path: FLOW_COOKIE_PATH });
    },
  };
}
export type SignInFlows = ReturnType<typeof createSignInFlows>;

import { createSealedBox } from '@turnpike/core/crypto/sealed-box';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'session';
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

/**
 * What a signed-in browser carries. Only the user id is trusted from it: role and status are read fresh on every
 * call, so a demoted or disabled user loses rights at once.
 */
export interface SessionData {
  uid?: number;
  /** Issued at, Unix seconds. */
  iat?: number;
  /** OAuth state and invite code kept between the redirect and the callback. */
  oauthState?: string;
  aff?: string;
  /** Set once the human check passed in this session. */
  turnstile?: boolean;
}

/** Encrypts sessions into the cookie itself (AES-GCM), so any replica sharing SESSION_SECRET can read them. */
export function createSessionCodec(secret: string) {
  const box = createSealedBox(secret, 'turnpike session v1');
  return {
    encode(data: SessionData): string {
      return box.seal(
        JSON.stringify({ ...data, exp: Math.floor(Date.now() / 1000) + SESSION_MAX_AGE_SECONDS }),
      );
    },
    decode(cookie: string | undefined): SessionData {
      if (!cookie) return {};
      const text = box.open(cookie);
      if (!text) return {};
      try {
        const data = JSON.parse(text) as SessionData & { exp?: number };
        if (!data.exp || data.exp < Date.now() / 1000) return {};
        const { exp: _exp, ...session } = data;
        return session;
      } catch {
        return {};
      }
    },
  };
}
export type SessionCodec = ReturnType<typeof createSessionCodec>;

export function readSession(request: FastifyRequest, codec: SessionCodec): SessionData {
  return codec.decode(request.cookies[SESSION_COOKIE]);
}

export function writeSession(
  request: FastifyRequest,
  reply: FastifyReply,
  codec: SessionCodec,
  data: SessionData,
): void {
  reply.setCookie(SESSION_COOKIE, codec.encode(data), {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: SESSION_MAX_AGE_SECONDS,
  });
}

export function clearSession(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

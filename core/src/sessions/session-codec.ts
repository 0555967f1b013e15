/**
 * The console's session cookie: what a signed-in browser carries, sealed with SESSION_SECRET (AES-GCM) into the
 * cookie itself, so any process sharing the secret can read it — the console API signs people in with it and the
 * relay's playground (`/pg/*`) reads it, in ROLE=all and ROLE=relay alike. No Fastify here: the API's cookie
 * helpers wrap this codec.
 */
import { createSealedBox } from '../crypto/sealed-box.ts';

export const SESSION_COOKIE = 'session';
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

/**
 * What a signed-in browser carries. Only the user id is trusted from it: role and status are read fresh on every
 * call, so a demoted or disabled user loses rights at once. A signed-in session also names itself (`sid`) and the
 * user's session generation it was issued under (`gen`), so it can be ended (session-end.ts, docs/adr/0020).
 */
export interface SessionData {
  uid?: number;
  /** Issued at, Unix seconds. */
  iat?: number;
  /** This session's id, made at sign-in; a sign-out ends this id alone. */
  sid?: string;
  /** The user's session generation at sign-in; absent reads as 0 (cookies from before generations). */
  gen?: number;
  /**
   * Expiry, Unix seconds. Set when the cookie is first written and kept by every rewrite, so a session has one
   * lifetime however often it is re-sealed (an ended session cannot be refreshed past its end record).
   */
  exp?: number;
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
        JSON.stringify({ ...data, exp: data.exp ?? Math.floor(Date.now() / 1000) + SESSION_MAX_AGE_SECONDS }),
      );
    },
    decode(cookie: string | undefined): SessionData {
      if (!cookie) return {};
      const text = box.open(cookie);
      if (!text) return {};
      try {
        const data = JSON.parse(text) as SessionData;
        if (!data || typeof data.exp !== 'number' || data.exp < Date.now() / 1000) return {};
        return data;
      } catch {
        return {};
      }
    },
  };
}
export type SessionCodec = ReturnType<typeof createSessionCodec>;

/** The value of the session cookie in a raw `Cookie` header (for apps without a cookie plugin). */
export function readSessionCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value.startsWith('"') ? value.slice(1, -1) : value);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

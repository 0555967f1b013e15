import type { User } from '@turnpike/core/db/schema/users';
import {
  SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
  type SessionCodec,
  type SessionData,
} from '@turnpike/core/sessions/session-codec';
import { newSessionId } from '@turnpike/core/sessions/session-end';
import type { FastifyReply, FastifyRequest } from 'fastify';

// The codec lives in core so the relay's playground reads the same cookie; the API keeps its names.
export {
  createSessionCodec,
  SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
  type SessionCodec,
  type SessionData,
} from '@turnpike/core/sessions/session-codec';

export function readSession(request: FastifyRequest, codec: SessionCodec): SessionData {
  return codec.decode(request.cookies[SESSION_COOKIE]);
}

export function writeSession(
  request: FastifyRequest,
  reply: FastifyReply,
  codec: SessionCodec,
  data: SessionData,
): void {
  const sealed = codec.encode(data);
  // Later steps of this request (and a rewrite by one of them) read the session as it now is.
  request.cookies[SESSION_COOKIE] = sealed;
  reply.setCookie(SESSION_COOKIE, sealed, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: SESSION_MAX_AGE_SECONDS,
  });
}

/**
 * Signs `user` in: a new session with an id of its own, the user's current session generation and a full
 * lifetime. Of the browser's earlier session only the human-check pass is kept (a pending third-party state or
 * invite code is spent by signing in).
 */
export function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  codec: SessionCodec,
  user: Pick<User, 'id' | 'sessionGeneration'>,
): void {
  const { turnstile } = readSession(request, codec);
  writeSession(request, reply, codec, {
    uid: user.id,
    iat: Math.floor(Date.now() / 1000),
    sid: newSessionId(),
    gen: user.sessionGeneration,
    ...(turnstile ? { turnstile } : {}),
  });
}

/**
 * Keeps this request's session signed in after a change that ended the user's sessions (their own password
 * change): the same session, carried over to the user's new generation. Nothing for a call by access token.
 */
export function renewSession(
  request: FastifyRequest,
  reply: FastifyReply,
  codec: SessionCodec,
  user: Pick<User, 'id' | 'sessionGeneration'>,
): void {
  const session = readSession(request, codec);
  if (session.uid !== user.id) return;
  writeSession(request, reply, codec, { ...session, gen: user.sessionGeneration });
}

export function clearSession(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

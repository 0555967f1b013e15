import {
  SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
  type SessionCodec,
  type SessionData,
} from '@turnpike/core/sessions/session-codec';
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

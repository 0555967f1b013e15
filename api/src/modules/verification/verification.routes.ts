import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../../http/route-context.ts';

/** Email verification codes, password reset and email binding. */
export function registerVerificationRoutes(_app: FastifyInstance, _ctx: RouteContext): void {}

import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../../http/route-context.ts';

/** Admin user management: list, search, get, create, update, manage, delete. */
export function registerUserRoutes(_app: FastifyInstance, _ctx: RouteContext): void {}

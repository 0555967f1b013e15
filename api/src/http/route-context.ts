import type { onRequestAsyncHookHandler } from 'fastify';
import type { AppDeps } from '../deps.ts';
import type { AuthGate } from './auth.ts';
import type { SessionCodec } from './session.ts';

/** What every module's `register…Routes(app, ctx)` receives. */
export interface RouteContext {
  readonly deps: AppDeps;
  readonly auth: AuthGate;
  readonly sessions: SessionCodec;
  /** The strict per-IP limit for sign-in, registration, verification and reset. */
  readonly criticalLimit: onRequestAsyncHookHandler;
}

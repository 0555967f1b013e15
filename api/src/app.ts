import fastifyCookie from '@fastify/cookie';
import { answerClientError } from '@turnpike/core/http/edge-errors';
import { loggerOptions } from '@turnpike/core/http/log-redaction';
import { requestIdOf } from '@turnpike/core/http/request-id';
import { createMemoryKv, createRedisKv } from '@turnpike/core/kv/kv';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.ts';
import { createAuthGate } from './http/auth.ts';
import { registerConsole } from './http/console-static.ts';
import { answerFrameworkError, registerErrorHandler } from './http/error-handler.ts';
import { createRateLimit } from './http/rate-limit.ts';
import { refuseUnstorableText } from './http/request-text.ts';
import type { RouteContext } from './http/route-context.ts';
import { createSessionCodec } from './http/session.ts';
import { registerAuditRoutes } from './modules/audit/audit.routes.ts';
import { registerAuditHook } from './modules/audit/audit-hook.ts';
import { registerAuthRoutes } from './modules/auth/auth.routes.ts';
import { registerBatchRoutes } from './modules/batches/batches.routes.ts';
import { registerChannelRoutes } from './modules/channels/channels.routes.ts';
import { registerCheckinRoutes } from './modules/checkin/checkin.routes.ts';
import { registerContentLogRoutes } from './modules/content-logs/content-logs.routes.ts';
import { registerDataRoutes } from './modules/data/data.routes.ts';
import { registerLogRoutes } from './modules/logs/logs.routes.ts';
import { registerModelRoutes } from './modules/models/models.routes.ts';
import { registerOAuthRoutes } from './modules/oauth/oauth.routes.ts';
import { registerOptionRoutes } from './modules/options/options.routes.ts';
import { registerPasskeyRoutes } from './modules/passkeys/passkeys.routes.ts';
import { registerPlanRoutes } from './modules/plans/plans.routes.ts';
import { registerPricingRoutes } from './modules/pricing/pricing.routes.ts';
import { registerRedemptionRoutes } from './modules/redemptions/redemptions.routes.ts';
import { registerSelfRoutes } from './modules/self/self.routes.ts';
import { registerSetupRoutes } from './modules/setup/setup.routes.ts';
import { registerStatusRoutes } from './modules/status/status.routes.ts';
import { registerTaskRoutes } from './modules/tasks/tasks.routes.ts';
import { registerTokenRoutes } from './modules/tokens/tokens.routes.ts';
import { registerTwoFactorRoutes } from './modules/two-factor/two-factor.routes.ts';
import { registerUserRoutes } from './modules/users/users.routes.ts';
import { registerVerificationRoutes } from './modules/verification/verification.routes.ts';
import { registerWalletRoutes } from './modules/wallet/wallet.routes.ts';

export interface BuildAppOptions {
  /** pino options or false; the server passes its level, tests stay quiet. */
  logger?: boolean | Record<string, unknown>;
  /** Folder of the built console; defaults to console/dist. */
  consoleRoot?: string;
}

/** The console API: every /api route, registered explicitly. */
/**
 * Many scripts send `Content-Type: application/json` on every request; a GET, HEAD, DELETE or OPTIONS request
 * with that header and no body is read as having no body instead of being refused as malformed JSON. Every
 * other body goes through Fastify's own JSON parser (with its prototype-poisoning checks).
 */
function acceptEmptyJsonWithoutBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && BODILESS_METHODS.has(request.method)) return done(null, undefined);
    return parse(request, body as string, done);
  });
}
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const logger =
    options.logger === undefined || options.logger === false ? false : loggerOptions(options.logger);
  const app = Fastify({
    logger,
    trustProxy: deps.config.trustProxy,
    bodyLimit: 10 * 1024 * 1024,
    // The console calls some routes with a trailing slash and some without; both forms answer.
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: (request) => requestIdOf(request.headers),
    // Refusals before any route (oversized headers, an over-long or undecodable path) in the caller's shape.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandler(app);
  acceptEmptyJsonWithoutBody(app);
  await app.register(fastifyCookie);

  const limiterKv = deps.redis
    ? createRedisKv(deps.redis, `${deps.config.redisKeyPrefix}rl:`)
    : createMemoryKv(50_000);
  const apiLimit = createRateLimit(limiterKv, 'api', deps.config.rateLimits.api);
  const sessions = createSessionCodec(deps.config.sessionSecret);
  const ctx: RouteContext = {
    deps,
    auth: createAuthGate(deps, sessions),
    sessions,
    criticalLimit: createRateLimit(limiterKv, 'critical', deps.config.rateLimits.critical),
  };

  await app.register(
    async (api) => {
      api.addHook('onRequest', apiLimit);
      api.addHook('preValidation', refuseUnstorableText);
      // Before any module: every administrative change is audited in the transaction of the change (docs/adr/0045).
      registerAuditHook(api, ctx);
      registerSetupRoutes(api, ctx);
      registerStatusRoutes(api, ctx);
      registerAuthRoutes(api, ctx);
      registerTwoFactorRoutes(api, ctx);
      registerPasskeyRoutes(api, ctx);
      registerSelfRoutes(api, ctx);
      registerUserRoutes(api, ctx);
      registerOptionRoutes(api, ctx);
      registerVerificationRoutes(api, ctx);
      registerOAuthRoutes(api, ctx);
      registerLogRoutes(api, ctx);
      registerDataRoutes(api, ctx);
      registerPricingRoutes(api, ctx);
      registerTaskRoutes(api, ctx);
      registerBatchRoutes(api, ctx);
      registerChannelRoutes(api, ctx);
      registerModelRoutes(api, ctx);
      registerTokenRoutes(api, ctx);
      registerRedemptionRoutes(api, ctx);
      registerWalletRoutes(api, ctx);
      registerPlanRoutes(api, ctx);
      registerAuditRoutes(api, ctx);
      registerCheckinRoutes(api, ctx);
      registerContentLogRoutes(api, ctx);
    },
    { prefix: '/api' },
  );
  await registerConsole(app, {
    webLimit: createRateLimit(limiterKv, 'web', deps.config.rateLimits.web),
    ...(options.consoleRoot ? { root: options.consoleRoot } : {}),
  });
  return app;
}

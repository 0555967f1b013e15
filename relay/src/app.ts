/**
 * The relay: OpenAI-compatible `/v1/*` routes over the in-memory caches (state/) and the pipeline (pipeline/).
 * `registerRelay` adds them to any Fastify app, so ROLE=all serves them beside the console API on one port;
 * `buildRelayApp` is the app of a relay-only process (ROLE=relay).
 */
import { randomUUID } from 'node:crypto';
import { createSessionCodec } from '@turnpike/core/sessions/session-codec';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { registerBillingCompat } from './billing-compat.ts';
import type { RelayDeps } from './deps.ts';
import { localError, toOpenAiErrorBody } from './errors.ts';
import { createWordMatcher, type WordMatcher } from './metering/sensitive.ts';
import {
  createRelayMetrics,
  isModelKnown,
  registerMetricsHooks,
  registerMetricsRoute,
} from './metrics/relay-metrics.ts';
import type { RelayContext } from './pipeline/context.ts';
import {
  imageEditSpec,
  imageGenerationSpec,
  speechSpec,
  transcriptionsSpec,
  translationsSpec,
} from './pipeline/endpoints/media.ts';
import type { EndpointSpec } from './pipeline/endpoints/spec.ts';
import {
  chatSpec,
  completionsSpec,
  embeddingsSpec,
  moderationsSpec,
  rerankSpec,
  responsesSpec,
} from './pipeline/endpoints/text.ts';
import { listModels, retrieveModel } from './pipeline/models.ts';
import { sweepStaleUploads } from './pipeline/multipart.ts';
import { notImplemented } from './pipeline/not-implemented.ts';
import { handlePlayground } from './pipeline/playground.ts';
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  createRedisRateLimitStore,
} from './pipeline/rate-limit.ts';
import { handleRelay } from './pipeline/relay.ts';
import type { SensitiveWords } from './pipeline/sensitive-words.ts';
import { createBatchWriter } from './pipeline/writer.ts';
import { createAuthCache } from './state/auth-cache.ts';
import { createChannelCache } from './state/channel-cache.ts';
import { createUpstreamClient } from './upstream/client.ts';

export interface RelayOptions {
  /** Interval of the batching writer (logs, used quota, request counts); default 1 s. */
  readonly flushIntervalMs?: number;
  /** Debounce of routing-table rebuilds after `channels.changed`; default 100 ms. */
  readonly channelDebounceMs?: number;
  /** Replaces `ModelRequestRateLimitDurationMinutes` (tests); default the option. */
  readonly rateLimitWindowMs?: number;
}

/** Registers the relay routes and their state on `app`; everything is flushed and closed with the app. */
export async function registerRelay(
  app: FastifyInstance,
  deps: RelayDeps,
  options: RelayOptions = {},
): Promise<void> {
  const resyncMs = deps.config.syncFrequencySeconds * 1000;
  const onError = (context: string) => (err: unknown) =>
    app.log.error({ err, context }, 'relay background task failed');
  const channels = createChannelCache({
    db: deps.db,
    bus: deps.bus,
    cryptoSecret: deps.config.cryptoSecret,
    resyncMs,
    debounceMs: options.channelDebounceMs ?? 100,
    onError: onError('channel cache'),
  });
  await channels.load();
  const upstream = createUpstreamClient();
  const writer = createBatchWriter({
    db: deps.db,
    intervalMs: options.flushIntervalMs ?? 1000,
    onError: onError('batch writer'),
    dashboard: () => ({
      enabled: deps.options.get('DataExportEnabled'),
      intervalMs: deps.options.get('DataExportInterval') * 60_000,
    }),
  });
  const auth = createAuthCache({
    db: deps.db,
    bus: deps.bus,
    maxAgeMs: resyncMs,
    onError: onError('token cache'),
    pendingDebit: (owner) => writer.pendingDebit(owner),
  });
  let keywordText: string | undefined;
  let keywords: WordMatcher = createWordMatcher([]);
  let sensitiveText: string | undefined;
  let sensitive: SensitiveWords = { matcher: createWordMatcher([]), longest: 0 };
  const ctx: RelayContext = {
    deps,
    auth,
    channels,
    upstream,
    writer,
    metrics: createRelayMetrics({
      isKnownModel: (model) =>
        isModelKnown(model, channels.table, deps.options.get('ModelRatio'), deps.options.get('ModelPrice')),
    }),
    rateLimit: createRateLimiter({
      options: deps.options,
      store: deps.redis
        ? createRedisRateLimitStore(deps.redis, deps.config.redisKeyPrefix)
        : createMemoryRateLimitStore(),
      log: app.log,
      ...(options.rateLimitWindowMs === undefined ? {} : { windowMs: options.rateLimitWindowMs }),
    }),
    log: app.log,
    keywords() {
      const text = deps.options.getText('AutomaticDisableKeywords');
      if (text !== keywordText) {
        keywordText = text;
        keywords = createWordMatcher(deps.options.get('AutomaticDisableKeywords'));
      }
      return keywords;
    },
    sensitiveWords() {
      const text = deps.options.getText('SensitiveWords');
      if (text !== sensitiveText) {
        sensitiveText = text;
        const words = deps.options.get('SensitiveWords');
        sensitive = {
          matcher: createWordMatcher(words),
          longest: words.reduce((longest, word) => Math.max(longest, word.length), 0),
        };
      }
      return sensitive;
    },
  };

  ctx.metrics.observeChannelStates(() => channels.health());

  await app.register(
    async (relay) => {
      registerMetricsHooks(relay, ctx.metrics);
      relay.setErrorHandler(openAiErrorHandler);
      relay.setNotFoundHandler((request, reply) =>
        reply
          .code(404)
          .send(
            toOpenAiErrorBody(
              localError(
                404,
                'not_found',
                `no route ${request.method} ${request.url.split('?')[0]}`,
                'invalid_request_error',
              ),
              request.id,
            ),
          ),
      );
      // Multipart uploads are handed over unread: the endpoint spools them to disk (pipeline/multipart.ts).
      relay.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
      const route = (spec: EndpointSpec) => (request: FastifyRequest, reply: FastifyReply) =>
        handleRelay(ctx, spec, request, reply);
      relay.post('/chat/completions', route(chatSpec));
      relay.post('/completions', route(completionsSpec));
      relay.post('/embeddings', route(embeddingsSpec));
      relay.post('/engines/:model/embeddings', route(embeddingsSpec));
      relay.post('/moderations', route(moderationsSpec));
      relay.post('/rerank', route(rerankSpec));
      relay.post('/responses', route(responsesSpec));
      relay.post('/images/generations', route(imageGenerationSpec));
      relay.post('/images/edits', route(imageEditSpec));
      relay.post('/audio/speech', route(speechSpec));
      relay.post('/audio/transcriptions', route(transcriptionsSpec));
      relay.post('/audio/translations', route(translationsSpec));
      relay.get('/models', (request, reply) => listModels(ctx, request, reply));
      relay.get<{ Params: { model: string } }>('/models/:model', (request, reply) =>
        retrieveModel(ctx, request, reply),
      );
      const unimplemented = (request: FastifyRequest, reply: FastifyReply) =>
        notImplemented(ctx, request, reply);
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/files', handler: unimplemented });
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/files/*', handler: unimplemented });
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/fine-tunes', handler: unimplemented });
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/fine-tunes/*', handler: unimplemented });
      relay.post('/images/variations', unimplemented);
      relay.delete('/models/:model', unimplemented);
    },
    { prefix: '/v1' },
  );
  // The console playground: session auth, same port as /api in ROLE=all (reference §2.3).
  const sessions = createSessionCodec(deps.config.sessionSecret);
  await app.register(
    async (playground) => {
      playground.setErrorHandler(openAiErrorHandler);
      playground.post('/chat/completions', (request, reply) =>
        handlePlayground(ctx, sessions, request, reply),
      );
    },
    { prefix: '/pg' },
  );
  registerMetricsRoute(app, ctx.metrics, deps.config.metricsToken);
  await registerBillingCompat(app, ctx);

  // Upload spools a crashed process left behind (pipeline/multipart.ts); in the background, at start.
  app.addHook('onReady', async () => {
    void sweepStaleUploads()
      .then((removed) => {
        if (removed > 0) app.log.info({ removed }, 'removed stale upload spools');
      })
      .catch((err: unknown) => app.log.warn({ err }, 'could not sweep upload spools'));
  });
  app.addHook('onClose', async () => {
    auth.close();
    channels.close();
    await writer.close();
    await upstream.close();
  });
}

/** Fastify-level failures (bad JSON, body too large, a bug) in OpenAI's error shape. */
function openAiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) request.log.error({ err: error }, 'relay request failed');
  const message = status === 500 ? 'internal error of the gateway' : error.message;
  const code = status === 500 ? 'internal_error' : 'invalid_request';
  const type = status === 500 ? 'new_api_error' : 'invalid_request_error';
  return reply.code(status).send(toOpenAiErrorBody(localError(status, code, message, type), request.id));
}

const REQUEST_ID = /^[\w.:-]{1,64}$/;

/** A relay-only app (ROLE=relay). */
export async function buildRelayApp(
  deps: RelayDeps,
  options: RelayOptions & { logger?: boolean | Record<string, unknown> } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      options.logger === undefined || options.logger === false
        ? false
        : {
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.key', '*.password'],
            ...(options.logger === true ? {} : options.logger),
          },
    // Every relayed call is recorded by the consume log and the metrics; a log line per request would cost the
    // relay about a tenth of its CPU (make bench). Failures are still logged by the pipeline.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.config.trustProxy,
    bodyLimit: 32 * 1024 * 1024,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
  });
  // A callback hook: an async one costs a promise on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  await registerRelay(app, deps, options);
  return app;
}

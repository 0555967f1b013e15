/**
 * The relay: OpenAI-compatible `/v1/*` routes over the in-memory caches (state/) and the pipeline (pipeline/).
 * `registerRelay` adds them to any Fastify app, so ROLE=all serves them beside the console API on one port;
 * `buildRelayApp` is the app of a relay-only process (ROLE=relay).
 */

import path from 'node:path';
import type { Ledger } from '@turnpike/core/billing/ledger';
import { openLedger } from '@turnpike/core/billing/open-ledger';
import { clientProtocolOf, edgeErrorBody } from '@turnpike/core/http/edge-errors';
import { loggerOptions } from '@turnpike/core/http/log-redaction';
import { requestIdOf } from '@turnpike/core/http/request-id';
import { createMemoryKv } from '@turnpike/core/kv/kv';
import { createSmtpMailer } from '@turnpike/core/mail/mailer';
import { createNotifier, type Notifier } from '@turnpike/core/notify/notifier';
import { createPriceBook, priceTablesOf } from '@turnpike/core/options/price-tables';
import { createSessionCodec } from '@turnpike/core/sessions/session-codec';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RequestPayload,
} from 'fastify';
import { registerBillingCompat } from './billing-compat.ts';
import { corsHeaders, isCrossOriginPath, preflightHeaders } from './cors.ts';
import type { RelayDeps } from './deps.ts';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  gatewayFailureOf,
  localError,
  type RelayError,
  toOpenAiErrorBody,
} from './errors.ts';
import { countTokensSpec, messagesSpec } from './formats/anthropic/endpoints.ts';
import { geminiSpecOf, readModelAction } from './formats/gemini/endpoints.ts';
import { geminiIngress } from './formats/gemini/ingress.ts';
import { ingressOfProtocol } from './formats/ingress.ts';
import { openAiChatIngress } from './formats/openai/chat-ingress.ts';
import {
  imageEditSpec,
  imageGenerationSpec,
  speechSpec,
  transcriptionsSpec,
  translationsSpec,
} from './formats/openai/media-endpoints.ts';
import {
  chatSpec,
  completionsSpec,
  embeddingsSpec,
  moderationsSpec,
  rerankSpec,
  responsesCompactSpec,
  responsesSpec,
} from './formats/openai/text-endpoints.ts';
import { enterThrough, type RelayHandler, relayHandler } from './formats/route.ts';
import { createFrontDoor, installFrontDoor } from './front-door.ts';
import { createMemoryCounterStore } from './limits/counters.ts';
import { createLimiter } from './limits/limiter.ts';
import { createRedisCounterStore } from './limits/redis-counters.ts';
import { createWordMatcher, type WordMatcher } from './metering/sensitive.ts';
import {
  createRelayMetrics,
  isModelKnown,
  registerMetricsHooks,
  registerMetricsRoute,
} from './metrics/relay-metrics.ts';
import { createContentLogs } from './pipeline/content-capture.ts';
import { createContentLogWriter } from './pipeline/content-log-writer.ts';
import type { RelayContext } from './pipeline/context.ts';
import type { EndpointSpec } from './pipeline/endpoints/spec.ts';
import { geminiModels, listModels, retrieveModel } from './pipeline/models.ts';
import { sweepStaleUploads } from './pipeline/multipart.ts';
import { notImplemented } from './pipeline/not-implemented.ts';
import { handlePlayground } from './pipeline/playground.ts';
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  createRedisRateLimitStore,
} from './pipeline/rate-limit.ts';
import { sendError } from './pipeline/respond.ts';
import type { SensitiveWords } from './pipeline/sensitive-words.ts';
import { openSettlementSpool, recoverSettlementSpools } from './pipeline/settlement-spool.ts';
import { type SettlementRecord, writeRecords } from './pipeline/write-records.ts';
import { createBatchWriter, newJournalId } from './pipeline/writer.ts';
import { registerRealtime } from './realtime/route.ts';
import { decodeBody, UNREADABLE_ENCODING, unsupportedEncoding } from './request-encoding.ts';
import { createAuthCache } from './state/auth-cache.ts';
import { createChannelCache } from './state/channel-cache.ts';
import { registerTaskRoutes } from './tasks/register.ts';
import { createUpstreamClient } from './upstream/client.ts';

/** The relay's POST routes with a fixed path (under /v1); the JSON ones go through the front door too. */
const FIXED_POSTS: Readonly<Record<string, EndpointSpec>> = {
  '/chat/completions': chatSpec,
  '/completions': completionsSpec,
  '/embeddings': embeddingsSpec,
  '/moderations': moderationsSpec,
  '/rerank': rerankSpec,
  '/responses': responsesSpec,
  '/responses/compact': responsesCompactSpec,
  '/images/generations': imageGenerationSpec,
  '/images/edits': imageEditSpec,
  '/audio/speech': speechSpec,
  '/audio/transcriptions': transcriptionsSpec,
  '/audio/translations': translationsSpec,
  '/messages': messagesSpec,
  '/messages/count_tokens': countTokensSpec,
};

/** The largest request body the relay reads (images and audio as base64 can be large). */
const RELAY_BODY_LIMIT = 32 * 1024 * 1024;

export interface RelayOptions {
  /** Interval of the batching writer (logs, used quota, request counts); default 1 s. */
  readonly flushIntervalMs?: number;
  /** Replaces `ModelRequestRateLimitDurationMinutes` (tests); default the option. */
  readonly rateLimitWindowMs?: number;
  /** The window of the rpm and tpm limits (tests); default a minute. */
  readonly limitWindowMs?: number;
  /** How long a concurrency slot lives without renewal (tests); default 60 s. */
  readonly limitLeaseMs?: number;
  /**
   * The clock quota windows are counted by, in Unix seconds (tests move it past a reset); default the system clock
   * shifted by QUOTA_WINDOW_CLOCK_OFFSET_SECONDS.
   */
  readonly windowClock?: () => number;
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
    onError: onError('channel cache'),
  });
  await channels.load();
  const upstream = createUpstreamClient();
  const journal = newJournalId();
  // Without Redis, settled calls an earlier run could not write wait in its spool: they are written before any
  // balance is read, so no base misses them (docs/adr/0022).
  const spoolDir = path.join(deps.config.dataDir, 'settlements');
  if (!deps.config.redisUrl) await recoverSpools(deps.db, spoolDir, journal, app.log);
  const ledger = await openLedger({
    db: deps.db,
    bus: deps.bus,
    redisUrl: deps.config.redisUrl,
    keyPrefix: deps.config.redisKeyPrefix,
    onError: onError('ledger'),
    onDegraded: (degraded) =>
      degraded
        ? app.log.warn("Redis is unreachable: admitting on this process's own view of balances")
        : app.log.info('Redis is back: balances are shared again'),
  });
  const notifier = createNotifier({
    db: deps.db,
    options: (key) => deps.options.get(key),
    mailer: createSmtpMailer((key) => deps.options.get(key)),
    kv: deps.kv ?? createMemoryKv(),
    log: app.log,
  });
  const writer = createBatchWriter({
    db: deps.db,
    journal,
    intervalMs: options.flushIntervalMs ?? 1000,
    maxQueued: deps.config.settlementQueueMax,
    onDebitsWritten: (debits, upTo) => ledger.written(debits, upTo),
    onUserBalances: (changes) => notifier.balancesLowered(changes),
    onError: onError('batch writer'),
    dashboard: () => deps.options.get('DataExportEnabled'),
    durability: {
      journal: (entry) => ledger.journal(entry),
      attach: (unwritten) => ledger.attachJournal(unwritten),
      spool: deps.config.redisUrl ? undefined : openSettlementSpool(spoolDir, journal),
    },
  });
  const stopOrphans = drainOrphanJournals(ledger, deps.db, notifier, onError('orphaned journal'));
  // Content logs (docs/adr/0045): a writer of their own, and the decision from memory.
  const contentLogWriter = createContentLogWriter({
    db: deps.db,
    options: deps.options,
    intervalMs: options.flushIntervalMs ?? 1000,
    onError: (err, context) => app.log.error({ err, context }, 'content logs failed'),
  });
  const contentLogs = createContentLogs({
    db: deps.db,
    bus: deps.bus,
    options: deps.options,
    sink: contentLogWriter,
    onError: onError('content logs'),
  });
  await contentLogs.load();
  const auth = createAuthCache({
    db: deps.db,
    bus: deps.bus,
    maxAgeMs: resyncMs,
    onError: onError('token cache'),
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
    ledger,
    writer,
    contentLogs,
    prices: createPriceBook(deps.options),
    notifier,
    metrics: createRelayMetrics({
      // Priced in any group counts too: a model only a group map prices is one an administrator configured.
      isKnownModel: (model) => {
        const { modelRatio, modelPrice, groupPrices } = priceTablesOf((key) => deps.options.get(key));
        const groupMaps = [groupPrices?.modelRatio, groupPrices?.modelPrice].flatMap((m) =>
          Object.values(m ?? {}),
        );
        return isModelKnown(model, channels.table, modelRatio, modelPrice, ...groupMaps);
      },
    }),
    rateLimit: createRateLimiter({
      options: deps.options,
      store: deps.redis
        ? createRedisRateLimitStore(deps.redis, deps.config.redisKeyPrefix)
        : createMemoryRateLimitStore(),
      log: app.log,
      ...(options.rateLimitWindowMs === undefined ? {} : { windowMs: options.rateLimitWindowMs }),
    }),
    limits: createLimiter({
      store: deps.redis
        ? createRedisCounterStore(deps.redis, deps.config.redisKeyPrefix)
        : createMemoryCounterStore(),
      log: app.log,
      ...(options.limitWindowMs === undefined ? {} : { windowMs: options.limitWindowMs }),
      ...(options.limitLeaseMs === undefined ? {} : { leaseMs: options.limitLeaseMs }),
    }),
    log: app.log,
    windowClock:
      options.windowClock ??
      (() => Math.floor(Date.now() / 1000) + deps.config.quotaWindowClockOffsetSeconds),
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

  ctx.metrics.observeRedisDegraded(() => ledger.isDegraded());
  ctx.metrics.observeConfigVersion(() => deps.bus.appliedVersion());
  ctx.metrics.observeLogQueueDepth(() => writer.queuedLogs());
  ctx.metrics.observeSettlementBacklog(() => writer.backlog());
  const stopApplyTiming = deps.bus.onApplied((_version, publishedAt) =>
    ctx.metrics.recordConfigApply(Math.max(0, Date.now() - publishedAt) / 1000),
  );
  ctx.metrics.observeChannelStates(() => channels.health());

  // Cross-origin access to the model routes (cors.ts); a callback hook, as an async one costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (isCrossOriginPath(request.url)) {
      const cors = corsHeaders(request.headers);
      if (cors) reply.headers(cors);
    }
    done();
  });
  const preflight = (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(204).headers(preflightHeaders(request.headers)).send();
  app.options('/v1/*', preflight);
  app.options('/dashboard/*', preflight);

  const geminiAction = geminiActionHandler(ctx);
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
      relay.addHook('preParsing', decompressBody);
      const route = (spec: EndpointSpec) => relayHandler(ctx, spec);
      for (const [path, spec] of Object.entries(FIXED_POSTS)) relay.post(path, route(spec));
      relay.post('/engines/:model/embeddings', route(embeddingsSpec));
      relay.get('/models', (request, reply) => listModels(ctx, request, reply));
      relay.get<{ Params: { model: string } }>('/models/:model', (request, reply) =>
        retrieveModel(ctx, request, reply),
      );
      const unimplemented = (request: FastifyRequest, reply: FastifyReply) =>
        notImplemented(ctx, request, reply);
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/fine-tunes', handler: unimplemented });
      relay.route({ method: ['GET', 'POST', 'DELETE'], url: '/fine-tunes/*', handler: unimplemented });
      relay.post('/images/variations', unimplemented);
      relay.delete('/models/:model', unimplemented);
      // Gemini clients on the stable version: `POST /v1/models/<model>:<action>`.
      relay.post('/models/*', geminiAction);
    },
    { prefix: '/v1' },
  );
  // Gemini's own routes, for Gemini clients (model and action in the path; errors in Gemini's shape).
  await app.register(
    async (gemini) => {
      gemini.setErrorHandler((error: FastifyError, request, reply) => {
        const shown = gatewayFailureOf(error);
        if (shown.status === 500) request.log.error({ err: error }, 'relay request failed');
        if (shown.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        return geminiFailure(request, reply, shown);
      });
      gemini.setNotFoundHandler((request, reply) =>
        geminiFailure(
          request,
          reply,
          localError(404, 'NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
        ),
      );
      gemini.addHook('preParsing', decompressBody);
      gemini.post<{ Params: { '*': string } }>('/models/*', geminiAction);
      gemini.get('/models', (request, reply) => geminiModels(ctx, request, reply, undefined));
      gemini.get<{ Params: { '*': string } }>('/models/*', (request, reply) =>
        geminiModels(ctx, request, reply, request.params['*']),
      );
    },
    { prefix: '/v1beta' },
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
  installFrontDoor(
    app,
    createFrontDoor({
      routes: new Map(
        Object.entries(FIXED_POSTS).map(([path, spec]) => [`/v1${path}`, relayHandler(ctx, spec)]),
      ),
      errorBody: (path, error, id) =>
        (FIXED_POSTS[path.slice(3)]?.ingress ?? openAiChatIngress).errorBody(error, id),
      metrics: ctx.metrics,
      log: app.log,
      trustProxy: deps.config.trustProxy,
      bodyLimit: RELAY_BODY_LIMIT,
    }),
  );
  registerMetricsRoute(app, ctx.metrics, deps.config.metricsToken);
  await registerBillingCompat(app, ctx);
  await registerTaskRoutes(app, ctx);
  registerRealtime(app, ctx);

  // Upload spools a crashed process left behind (pipeline/multipart.ts); in the background, at start.
  app.addHook('onReady', async () => {
    void sweepStaleUploads()
      .then((removed) => {
        if (removed > 0) app.log.info({ removed }, 'removed stale upload spools');
      })
      .catch((err: unknown) => app.log.warn({ err }, 'could not sweep upload spools'));
  });
  app.addHook('onClose', async () => {
    ctx.limits.close();
    stopApplyTiming();
    auth.close();
    channels.close();
    await stopOrphans();
    await writer.close();
    contentLogs.close();
    await contentLogWriter.close();
    await ledger.close();
    await upstream.close();
  });
}

/**
 * Writes, every few seconds, the journals that dead relays left in Redis (their charges stay outstanding until
 * then); several relays may try at once, a lock per journal and the journal marks keep it to one write.
 */
function drainOrphanJournals(
  ledger: Ledger,
  db: RelayDeps['db'],
  notifier: Notifier,
  onError: (error: unknown) => void,
): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  const write = async (payloads: readonly string[]) => {
    const written = await writeRecords(
      db,
      payloads.map((payload) => JSON.parse(payload) as SettlementRecord),
    );
    if (written.balances.length > 0) notifier.balancesLowered(written.balances);
  };
  const timer = setInterval(() => {
    running ??= ledger
      .drainOrphans(write)
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }, 2_000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** Writes the spools of earlier runs, trying again while the database is away (the relay is not ready yet). */
async function recoverSpools(db: RelayDeps['db'], dir: string, except: string, log: FastifyBaseLogger) {
  for (let wait = 250; ; wait = Math.min(wait * 2, 5_000)) {
    try {
      const written = await recoverSettlementSpools(db, dir, except);
      if (written > 0) log.info({ written }, 'wrote settled calls an earlier run had spooled');
      return;
    } catch (err) {
      log.warn({ err }, 'could not write the spooled settled calls yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Compressed request bodies (request-encoding.ts) on the routes Fastify serves; the front door does its own. */
function decompressBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
  done: (err: Error | null, payload?: RequestPayload) => void,
) {
  const decoded = decodeBody(request.headers['content-encoding'], payload, request.routeOptions.bodyLimit);
  if (decoded.kind === 'plain') return done(null, payload);
  if (decoded.kind === 'unsupported')
    return done(Object.assign(new Error(unsupportedEncoding(decoded.encoding)), { statusCode: 415 }));
  // Fastify checks Content-Length against the bytes received, which are the compressed ones.
  const body = decoded.body as RequestPayload;
  body.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength = (body.receivedEncodedLength ?? 0) + chunk.length;
  });
  body.on('error', (error: Error & { statusCode?: number }) => {
    if (error.statusCode === 413) return;
    error.statusCode = 400;
    error.message = UNREADABLE_ENCODING;
  });
  done(null, body);
}

/** Fastify-level failures (bad JSON, body too large, a bug) in OpenAI's error shape. */
function openAiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const failure = gatewayFailureOf(error);
  if (failure.status === 500) request.log.error({ err: error }, 'relay request failed');
  if (failure.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  // Anthropic's routes refuse in Anthropic's shape, even before their handler ran (a body Fastify could not read),
  // and Gemini's in Gemini's (its actions are also served as POST /v1/models/{model}:{action}).
  const ingress = ingressOfProtocol(clientProtocolOf(request.url, request.method));
  return reply.code(failure.status).send(ingress.errorBody(failure, request.id));
}

/** A relay-only app (ROLE=relay). */
export async function buildRelayApp(
  deps: RelayDeps,
  options: RelayOptions & { logger?: boolean | Record<string, unknown> } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger === undefined || options.logger === false ? false : loggerOptions(options.logger),
    // Every relayed call is recorded by the consume log and the metrics; a log line per request would cost the
    // relay about a tenth of its CPU (make bench). Failures are still logged by the pipeline.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.config.trustProxy,
    bodyLimit: RELAY_BODY_LIMIT,
    genReqId: (request) => requestIdOf(request.headers),
  });
  // A callback hook: an async one costs a promise on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // A path outside every relay scope: a 404 in the protocol its prefix belongs to (Fastify's own shape otherwise).
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const message = `no route ${request.method} ${path}`;
    return reply.code(404).send(edgeErrorBody(path, 404, 'NOT_FOUND', message, request.method));
  });
  await registerRelay(app, deps, options);
  return app;
}

/** A refusal on a Gemini route, in Gemini's shape. */
function geminiFailure(request: FastifyRequest, reply: FastifyReply, error: RelayError) {
  enterThrough(geminiIngress, request);
  return sendError(request, reply, error);
}

/** The handler of `POST /v1beta/models/<model>:<action>` (also `/v1/models/...`, Gemini's stable version). */
function geminiActionHandler(ctx: RelayContext) {
  const handlers = new Map<EndpointSpec, RelayHandler>();
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.params as { '*'?: unknown } | undefined)?.['*'];
    const read = typeof path === 'string' ? readModelAction(path) : undefined;
    const spec = read && geminiSpecOf(read.action);
    if (!spec)
      return geminiFailure(
        request,
        reply,
        localError(404, 'NOT_FOUND', 'unknown model action', 'invalid_request_error'),
      );
    let handler = handlers.get(spec);
    if (!handler) {
      handler = relayHandler(ctx, spec);
      handlers.set(spec, handler);
    }
    return handler(request, reply);
  };
}

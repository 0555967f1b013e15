/**
 * The relay: OpenAI-compatible `/v1/*` routes over the in-memory caches (state/) and the pipeline (pipeline/).
 * `registerRelay` adds them to any Fastify app, so ROLE=all serves them beside the console API on one port;
 * `buildRelayApp` is the app of a relay-only process (ROLE=relay). Each builder below makes one part (the books,
 * the content logs, the limits, the context) and the routes are http/'s (docs/adr/0047).
 */

import path from 'node:path';
import type { Ledger } from '@turnpike/core/billing/ledger';
import { openLedger } from '@turnpike/core/billing/open-ledger';
import { edgeErrorBody } from '@turnpike/core/http/edge-errors';
import { loggerOptions } from '@turnpike/core/http/log-redaction';
import { requestIdOf } from '@turnpike/core/http/request-id';
import { createMemoryKv } from '@turnpike/core/kv/kv';
import { createSmtpMailer } from '@turnpike/core/mail/mailer';
import { createNotifier, type Notifier } from '@turnpike/core/notify/notifier';
import { createPriceBook, priceTablesOf } from '@turnpike/core/options/price-tables';
import { createSessionCodec } from '@turnpike/core/sessions/session-codec';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerBillingCompat } from './billing-compat.ts';
import { openSettlementSpool, recoverSettlementSpools } from './books/settlement-spool.ts';
import { type SettlementRecord, writeRecords } from './books/write-records.ts';
import { type BatchWriter, createBatchWriter, newJournalId } from './books/writer.ts';
import type { RelayDeps } from './deps.ts';
import { sweepStaleUploads } from './formats/multipart.ts';
import { installFrontDoor } from './http/front-door.ts';
import {
  RELAY_BODY_LIMIT,
  registerCors,
  registerGeminiRoutes,
  registerPlaygroundRoute,
  registerV1Routes,
  relayFrontDoor,
} from './http/routes.ts';
import { createMemoryCounterStore } from './limits/counters.ts';
import { createLimiter } from './limits/limiter.ts';
import { createRedisCounterStore } from './limits/redis-counters.ts';
import { createWordMatcher, type WordMatcher } from './metering/sensitive.ts';
import { createRelayMetrics, isModelKnown, registerMetricsRoute } from './metrics/relay-metrics.ts';
import { createContentLogs } from './pipeline/content-capture.ts';
import { createContentLogWriter } from './pipeline/content-log-writer.ts';
import type { RelayContext } from './pipeline/context.ts';
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  createRedisRateLimitStore,
} from './pipeline/rate-limit.ts';
import type { SensitiveWords } from './pipeline/sensitive-words.ts';
import { registerRealtime } from './realtime/route.ts';
import { createResponseStore } from './responses-store/store.ts';
import { createAuthCache } from './state/auth-cache.ts';
import { type ChannelCache, createChannelCache } from './state/channel-cache.ts';
import { registerTaskRoutes } from './tasks/register.ts';
import { createUpstreamClient } from './upstream/client.ts';

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
  /** The clock stored responses' retention is counted by, in milliseconds (tests move it); default Date.now. */
  readonly responsesClock?: () => number;
}

/** Logs a background task's failure; what every builder hands its caches and writers. */
type OnError = (context: string) => (err: unknown) => void;

/** Registers the relay routes and their state on `app`; everything is flushed and closed with the app. */
export async function registerRelay(
  app: FastifyInstance,
  deps: RelayDeps,
  options: RelayOptions = {},
): Promise<void> {
  const onError: OnError = (context) => (err) =>
    app.log.error({ err, context }, 'relay background task failed');
  const resyncMs = deps.config.syncFrequencySeconds * 1000;
  const channels = createChannelCache({
    db: deps.db,
    bus: deps.bus,
    cryptoSecret: deps.config.cryptoSecret,
    resyncMs,
    onError: onError('channel cache'),
  });
  await channels.load();
  const books = await openBooks(app, deps, options, onError);
  const content = await openContentLogs(app, deps, options, onError);
  // Stored Responses (docs/adr/0051): a writer of their own, read back only for a chain a call continues.
  const responses = createResponseStore({
    db: deps.db,
    redis: deps.redis,
    redisKeyPrefix: deps.config.redisKeyPrefix,
    intervalMs: options.flushIntervalMs ?? 1000,
    ...(options.responsesClock === undefined ? {} : { now: options.responsesClock }),
    onError: (err, context) => app.log.error({ err, context }, 'stored responses failed'),
  });
  const auth = createAuthCache({
    db: deps.db,
    bus: deps.bus,
    maxAgeMs: resyncMs,
    onError: onError('token cache'),
  });
  const ctx: RelayContext = {
    deps,
    auth,
    channels,
    upstream: createUpstreamClient(),
    ledger: books.ledger,
    writer: books.writer,
    contentLogs: content.contentLogs,
    responses,
    prices: createPriceBook(deps.options),
    notifier: books.notifier,
    metrics: createMetrics(deps, channels),
    ...createLimits(app, deps, options),
    ...wordLists(deps),
    log: app.log,
    windowClock:
      options.windowClock ??
      (() => Math.floor(Date.now() / 1000) + deps.config.quotaWindowClockOffsetSeconds),
  };
  const stopObserving = observeRelay(ctx, books.writer);
  await registerRoutes(app, ctx);
  app.addHook('onClose', async () => {
    ctx.limits.close();
    stopObserving();
    auth.close();
    channels.close();
    await books.stopOrphans();
    await books.writer.close();
    await content.close();
    await responses.close();
    await books.ledger.close();
    await ctx.upstream.close();
  });
}

/** Every route of the relay: http/'s, the metrics, the billing dashboard, the tasks and the realtime sockets. */
async function registerRoutes(app: FastifyInstance, ctx: RelayContext): Promise<void> {
  const { config } = ctx.deps;
  registerCors(app);
  await registerV1Routes(app, ctx);
  await registerGeminiRoutes(app, ctx);
  await registerPlaygroundRoute(app, ctx, createSessionCodec(config.sessionSecret));
  installFrontDoor(app, relayFrontDoor(ctx, config));
  registerMetricsRoute(app, ctx.metrics, config.metricsToken);
  await registerBillingCompat(app, ctx);
  await registerTaskRoutes(app, ctx);
  registerRealtime(app, ctx);
  // Upload spools a crashed process left behind (formats/multipart.ts); in the background, at start.
  app.addHook('onReady', async () => {
    void sweepStaleUploads()
      .then((removed) => {
        if (removed > 0) app.log.info({ removed }, 'removed stale upload spools');
      })
      .catch((err: unknown) => app.log.warn({ err }, 'could not sweep upload spools'));
  });
}

/**
 * The books (docs/adr/0016, 0022): the ledger balances are held on, the batched writer of charges and logs with its
 * journal (and, without Redis, its spool, whose earlier runs are written first), the notifier of low balances, and
 * the drain of journals dead relays left.
 */
async function openBooks(app: FastifyInstance, deps: RelayDeps, options: RelayOptions, onError: OnError) {
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
  return { ledger, notifier, writer, stopOrphans };
}

/** Content logs (docs/adr/0045): a writer of their own, and the decision from memory. */
async function openContentLogs(
  app: FastifyInstance,
  deps: RelayDeps,
  options: RelayOptions,
  onError: OnError,
) {
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
  const close = async () => {
    contentLogs.close();
    await contentLogWriter.close();
  };
  return { contentLogs, close };
}

/** Prometheus metrics; a model counts as known when a channel serves it or a price table prices it. */
function createMetrics(deps: RelayDeps, channels: ChannelCache) {
  return createRelayMetrics({
    // Priced in any group counts too: a model only a group map prices is one an administrator configured.
    isKnownModel: (model) => {
      const { modelRatio, modelPrice, groupPrices } = priceTablesOf((key) => deps.options.get(key));
      const groupMaps = [groupPrices?.modelRatio, groupPrices?.modelPrice].flatMap((m) =>
        Object.values(m ?? {}),
      );
      return isModelKnown(model, channels.table, modelRatio, modelPrice, ...groupMaps);
    },
  });
}

/** The per-user request rate limit and the rpm, tpm and concurrency limits, in Redis when there is one. */
function createLimits(app: FastifyInstance, deps: RelayDeps, options: RelayOptions) {
  const rateLimit = createRateLimiter({
    options: deps.options,
    store: deps.redis
      ? createRedisRateLimitStore(deps.redis, deps.config.redisKeyPrefix)
      : createMemoryRateLimitStore(),
    log: app.log,
    ...(options.rateLimitWindowMs === undefined ? {} : { windowMs: options.rateLimitWindowMs }),
  });
  const limits = createLimiter({
    store: deps.redis
      ? createRedisCounterStore(deps.redis, deps.config.redisKeyPrefix)
      : createMemoryCounterStore(),
    log: app.log,
    ...(options.limitWindowMs === undefined ? {} : { windowMs: options.limitWindowMs }),
    ...(options.limitLeaseMs === undefined ? {} : { leaseMs: options.limitLeaseMs }),
  });
  return { rateLimit, limits };
}

/** `AutomaticDisableKeywords` and `SensitiveWords`, each compiled once per change of its option. */
function wordLists(deps: RelayDeps): Pick<RelayContext, 'keywords' | 'sensitiveWords'> {
  let keywordText: string | undefined;
  let keywords: WordMatcher = createWordMatcher([]);
  let sensitiveText: string | undefined;
  let sensitive: SensitiveWords = { matcher: createWordMatcher([]), longest: 0 };
  return {
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
}

/** The gauges read at scrape time and the config apply timing; returns what stops the timing. */
function observeRelay(ctx: RelayContext, writer: BatchWriter): () => void {
  const { deps, ledger, channels, metrics } = ctx;
  metrics.observeRedisDegraded(() => ledger.isDegraded());
  metrics.observeConfigVersion(() => deps.bus.appliedVersion());
  metrics.observeLogQueueDepth(() => writer.queuedLogs());
  metrics.observeSettlementBacklog(() => writer.backlog());
  metrics.observeChannelStates(() => channels.health());
  return deps.bus.onApplied((_version, publishedAt) =>
    metrics.recordConfigApply(Math.max(0, Date.now() - publishedAt) / 1000),
  );
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

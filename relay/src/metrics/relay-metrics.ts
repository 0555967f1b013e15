/**
 * Prometheus metrics of the relay, on a registry of their own (never prom-client's global one), so several relay
 * apps in one process (tests, ROLE=all) do not clash.
 *
 * Two counters count requests, each request once:
 * - `turnpike_relay_http_requests_total{route,status}`: every request under /v1, rejected ones included, counted
 *   by the Fastify hooks of {@link registerMetricsHooks} when the response closes;
 * - `turnpike_relay_calls_total{route,model,channel,status,stream}`: the relay calls that reached an upstream,
 *   counted by {@link RelayMetrics.recordCall}, which the pipeline calls once per such call.
 *
 * Labels are bounded: routes are route patterns (`/v1/models/:model`, never a URL), models are those of the
 * routing table or of the price tables (anything else is `other`), channels are channel ids, and there is no user
 * or token label. The hot path only bumps numbers found through maps of label values (no string is built and no
 * label object allocated per call); values are copied into prom-client's metrics when /metrics is scraped.
 */
import { timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { LimitKind, LimitScope } from '@turnpike/core/options/rate-limits';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { type RoutingTable, routeModelName } from '../routing/pick.ts';
import { createGenAiMetrics } from './gen-ai.ts';
import { type HistogramSeries, registerSeriesHistogram } from './series-histogram.ts';
import { isRelayTracingOn, type StepMarks, traceCall } from './tracing.ts';

/** Buckets (seconds) of the latency histograms: 1 ms … 120 s. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120,
];
/** Buckets (seconds) of the gateway overhead: it should stay well under a millisecond. */
export const OVERHEAD_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
];

/** The model label of every model that is neither routed nor priced. */
export const OTHER_MODEL = 'other';
/** The route label of requests no route matched (404s). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Status label of a request whose client went away before its response was complete (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;

/** One relay call that reached an upstream, as the pipeline reports it when the call ends. */
export interface RelayCall {
  /** The route pattern (`/v1/chat/completions`), not the URL. */
  readonly route: string;
  /** The model the caller asked for. */
  readonly model: string;
  /** The channel that answered (the last one tried). */
  readonly channelId: number;
  /** The HTTP status the client got. */
  readonly status: number;
  readonly isStream: boolean;
  /** From the request's arrival to the end of the answer. */
  readonly totalMs: number;
  /** Time spent waiting on upstreams (request sent → last byte read), over every attempt. */
  readonly upstreamMs: number;
  /** Time to the first token (stream) or to the whole answer (non-stream); undefined when none came. */
  readonly frtMs: number | undefined;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Quota charged. */
  readonly quota: number;
  /** `gen_ai.provider.name` of the answering channel (`openai`, `anthropic`, `gcp.gemini`, ...); default `openai`. */
  readonly provider?: string;
  /** The model the upstream answered with (after model mapping); default the caller's model. */
  readonly servedModel?: string;
  /** Input tokens read from the provider's prompt cache (part of `promptTokens`). */
  readonly cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheCreationTokens?: number;
  /** Output tokens spent on reasoning (part of `completionTokens`). */
  readonly reasoningTokens?: number;
  /** A low-cardinality error class (`timeout`, `upstream_error`, ...); default the status when it is >= 400. */
  readonly errorType?: string;
  /** The request id (`x-request-id`), for the call's trace span; never a metric label. */
  readonly requestId?: string;
  /** Where the call's time went, when tracing is on (tracing.ts). */
  readonly steps?: StepMarks | undefined;
}

/** What session affinity did for one call (docs/adr/0027). */
export type AffinityResult = 'hit' | 'miss' | 'rebind';

/** Why a charge was adjusted after the fact: the reasons of `turnpike_billing_adjustments_total`. */
export const BillingAdjustmentReason = {
  Refund: 'refund',
  ClientGone: 'client_gone',
  MissingUsage: 'missing_usage',
  UpstreamError: 'upstream_error',
} as const;
export type BillingAdjustmentReason = (typeof BillingAdjustmentReason)[keyof typeof BillingAdjustmentReason];

/** Buckets (seconds) of the time from a configuration change being published to a relay applying it. */
export const CONFIG_APPLY_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60,
];

/** A channel and its health state (`enabled`, `auto_disabled`, `cooling_down`, ...). */
export interface ChannelStateSample {
  readonly channelId: number;
  readonly state: string;
}

export interface RelayMetricsOptions {
  /**
   * Whether a model may be a label value; others are counted as `other`. Answers are cached for
   * `modelLabelTtlMs`, so this may be slowish. Default: no model is known.
   */
  readonly isKnownModel?: (model: string) => boolean;
  /** How long a model's label is cached; default 10 s. */
  readonly modelLabelTtlMs?: number;
  /** Node.js process metrics (CPU, memory, event loop lag, GC); default on. */
  readonly processMetrics?: boolean;
}

/** What {@link registerMetricsHooks} keeps per route: one counter cell per status. */
interface RouteRequests {
  readonly route: string;
  readonly byStatus: Map<number, { readonly labels: Record<string, string>; value: number }>;
}

/** What the batching writer has not written yet (docs/adr/0022). */
export interface SettlementBacklog {
  readonly records: number;
  readonly capacity: number;
  readonly oldestSeconds: number;
}

export interface RelayMetrics {
  readonly registry: Registry;
  /** Counts one relay call that reached an upstream; call it once per call, when its answer has ended. */
  recordCall(call: RelayCall): void;
  /** Route-level accounting of one /v1 request (see {@link registerMetricsHooks}). */
  requestStarted(routePattern: string | undefined): RouteRequests;
  requestEnded(route: RouteRequests, status: number): void;
  /** Requests being served right now. */
  readonly inflight: number;
  /** Plugs in the source of channel health states, read on each scrape. */
  observeChannelStates(collect: () => Iterable<ChannelStateSample>): void;
  /** `turnpike_redis_degraded`: whether the relay runs without Redis it was given (read on each scrape). */
  observeRedisDegraded(isDegraded: () => boolean): void;
  /** `turnpike_config_version_applied`: the configuration version this relay has applied (read on each scrape). */
  observeConfigVersion(version: () => number): void;
  /** `turnpike_log_queue_depth`: consume logs waiting in the batching writer (read on each scrape). */
  observeLogQueueDepth(depth: () => number): void;
  /**
   * `turnpike_settlement_queue_records`, `_capacity` and `_oldest_seconds`: settled calls not in the database yet,
   * how many may wait, and how long the oldest has (read on each scrape; docs/adr/0022).
   */
  observeSettlementBacklog(backlog: () => SettlementBacklog): void;
  /** `turnpike_config_apply_seconds`: one configuration change, from its event being published to applied. */
  recordConfigApply(seconds: number): void;
  /** `turnpike_billing_adjustments_total{reason}`: one charge adjusted after the fact. */
  recordBillingAdjustment(reason: BillingAdjustmentReason): void;
  /**
   * `turnpike_relay_rate_limited_total{scope,kind}`: one request refused by the relay's own limits (the per-user
   * request rate limit is scope `user`, kind `requests`).
   */
  recordRateLimited(scope?: LimitScope, kind?: LimitKind): void;
  /**
   * `turnpike_relay_affinity_total{result}`: a session call sent to its bound channel (`hit`), one without a binding
   * (`miss`), or one whose binding was dropped and made again elsewhere (`rebind`); docs/adr/0027.
   */
  recordAffinity(result: AffinityResult): void;
  /** Streams being answered right now (stream answers whose socket is still open). */
  readonly activeStreams: number;
  /** Counts `response` among the active streams until it closes; called once, when a stream's head is written. */
  streamStarted(response: ServerResponse): void;
  /** Counts a realtime session among the active streams until the function it answers is called. */
  realtimeSessionStarted(): () => void;
  /** The label a model is counted under (itself when known, else `other`). */
  modelLabel(model: string): string;
  /** The registry in the Prometheus text format. */
  render(): Promise<string>;
  readonly contentType: string;
}

interface CounterCell {
  readonly labels: Record<string, string>;
  value: number;
}

interface ModelTotals {
  readonly labels: Record<string, string>;
  promptTokens: number;
  cacheReadTokens: number;
  completionTokens: number;
  quota: number;
}

/** The histogram series of one route and stream flag. */
interface CallHistograms {
  readonly total: HistogramSeries;
  readonly upstream: HistogramSeries;
  readonly overhead: HistogramSeries;
  readonly firstToken: HistogramSeries;
}

type CallCells = Map<string, Map<number, Map<number, [CounterCell | undefined, CounterCell | undefined]>>>;

const MAX_CACHED_MODEL_LABELS = 4096;

export function createRelayMetrics(options: RelayMetricsOptions = {}): RelayMetrics {
  const registry = new Registry();
  const isKnownModel = options.isKnownModel ?? (() => false);
  const labelTtlMs = options.modelLabelTtlMs ?? 10_000;

  // Hot-path state: plain numbers, exported on scrape.
  let inflight = 0;
  const requestCells = new Map<string, RouteRequests>();
  const callCells = new Map<string, CallCells>();
  const callCellList: CounterCell[] = [];
  const modelTotals = new Map<string, ModelTotals>();
  const routeHistograms = new Map<string, [CallHistograms, CallHistograms]>();
  let modelLabels = new Map<string, string>();
  let modelLabelsBornAt = performance.now();
  let channelStates: (() => Iterable<ChannelStateSample>) | undefined;
  let redisDegraded: (() => boolean) | undefined;
  let configVersion: (() => number) | undefined;
  let logQueueDepth: (() => number) | undefined;
  let settlementBacklog: (() => SettlementBacklog) | undefined;
  const billingAdjustments = new Map<BillingAdjustmentReason, number>(
    Object.values(BillingAdjustmentReason).map((reason) => [reason, 0]),
  );
  const rateLimited = new Map<string, { labels: { scope: LimitScope; kind: LimitKind }; value: number }>();
  const affinity: Record<AffinityResult, number> = { hit: 0, miss: 0, rebind: 0 };
  /**
   * Streams whose socket is open. A counter bumped by the stream step, not a set of responses looked at when
   * scraped: keeping every response in a Set cost the relay about a tenth of its CPU per call (make bench).
   */
  let activeStreams = 0;
  const streamClosed = () => {
    activeStreams -= 1;
  };
  /** Realtime WebSocket sessions open now (counted among the active streams too). */
  let realtimeSessions = 0;

  new Counter({
    name: 'turnpike_relay_http_requests_total',
    help: 'Requests under /v1 by route pattern and response status, rejected ones included (499: client left)',
    labelNames: ['route', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const route of requestCells.values())
        for (const cell of route.byStatus.values()) this.inc(cell.labels, cell.value);
    },
  });
  new Counter({
    name: 'turnpike_relay_calls_total',
    help: 'Relay calls that reached an upstream, by route, model, answering channel, status and stream flag',
    labelNames: ['route', 'model', 'channel', 'status', 'stream'],
    registers: [registry],
    collect() {
      this.reset();
      for (const cell of callCellList) this.inc(cell.labels, cell.value);
    },
  });
  new Counter({
    name: 'turnpike_relay_prompt_tokens_total',
    help: 'Prompt (input) tokens billed, by model',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      for (const totals of modelTotals.values()) this.inc(totals.labels, totals.promptTokens);
    },
  });
  new Counter({
    name: 'turnpike_relay_prompt_cache_read_tokens_total',
    help: "Prompt tokens read from the provider's prompt cache (part of the prompt tokens), by model",
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      for (const totals of modelTotals.values()) this.inc(totals.labels, totals.cacheReadTokens);
    },
  });
  new Counter({
    name: 'turnpike_relay_affinity_total',
    help: 'Session calls by what affinity did: hit (sent to the bound channel), miss (no binding), rebind',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [result, count] of Object.entries(affinity)) this.inc({ result }, count);
    },
  });
  new Counter({
    name: 'turnpike_relay_completion_tokens_total',
    help: 'Completion (output) tokens billed, by model',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      for (const totals of modelTotals.values()) this.inc(totals.labels, totals.completionTokens);
    },
  });
  new Counter({
    name: 'turnpike_relay_quota_spent_total',
    help: 'Quota charged to users (500000 = 1 USD), by model',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      for (const totals of modelTotals.values()) this.inc(totals.labels, totals.quota);
    },
  });
  new Gauge({
    name: 'turnpike_relay_inflight_requests',
    help: 'Requests under /v1 being served right now (the autoscaling signal)',
    registers: [registry],
    collect() {
      this.set(inflight);
    },
  });
  new Gauge({
    name: 'turnpike_relay_channel_state',
    help: 'Channel health: 1 for the state each channel is in',
    labelNames: ['channel', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      if (!channelStates) return;
      for (const { channelId, state } of channelStates()) this.set({ channel: String(channelId), state }, 1);
    },
  });
  new Gauge({
    name: 'turnpike_relay_active_streams',
    help: 'Streams (text/event-stream answers) being sent right now: the second autoscaling signal',
    registers: [registry],
    collect() {
      this.set(activeStreams);
    },
  });
  new Gauge({
    name: 'turnpike_relay_realtime_sessions',
    help: 'Realtime WebSocket sessions open right now (also counted in turnpike_relay_active_streams)',
    registers: [registry],
    collect() {
      this.set(realtimeSessions);
    },
  });
  new Counter({
    name: 'turnpike_relay_rate_limited_total',
    help: "Requests refused by the relay's own limits, by scope (user, group, token, model, channel) and kind",
    labelNames: ['scope', 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const cell of rateLimited.values()) this.inc(cell.labels, cell.value);
    },
  });
  new Gauge({
    name: 'turnpike_redis_degraded',
    help: '1 while the relay runs on in-process fallbacks because the Redis it was given is unreachable',
    registers: [registry],
    collect() {
      this.set(redisDegraded?.() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'turnpike_config_version_applied',
    help: 'The configuration version this relay has applied',
    registers: [registry],
    collect() {
      this.set(configVersion?.() ?? 0);
    },
  });
  new Gauge({
    name: 'turnpike_log_queue_depth',
    help: 'Consume logs waiting in the batching writer',
    registers: [registry],
    collect() {
      this.set(logQueueDepth?.() ?? 0);
    },
  });
  new Gauge({
    name: 'turnpike_settlement_queue_records',
    help: 'Settled calls not written to the database yet (journaled in Redis or spooled)',
    registers: [registry],
    collect() {
      this.set(settlementBacklog?.().records ?? 0);
    },
  });
  new Gauge({
    name: 'turnpike_settlement_queue_capacity',
    help: 'Settled calls a relay queues before it refuses paid calls (a 503)',
    registers: [registry],
    collect() {
      this.set(settlementBacklog?.().capacity ?? 0);
    },
  });
  new Gauge({
    name: 'turnpike_settlement_queue_oldest_seconds',
    help: 'How long the oldest settled call not written to the database yet has waited',
    registers: [registry],
    collect() {
      this.set(settlementBacklog?.().oldestSeconds ?? 0);
    },
  });
  new Counter({
    name: 'turnpike_billing_adjustments_total',
    help: 'Charges adjusted after the fact, by reason: refund, client_gone, missing_usage, upstream_error',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of billingAdjustments) this.inc({ reason }, count);
    },
  });
  const histogram = (name: string, help: string, buckets: readonly number[]) =>
    registerSeriesHistogram(registry, name, help, buckets);
  const totalSeconds = histogram(
    'turnpike_relay_request_duration_seconds',
    'Relay calls from arrival to the end of the answer, by route and stream flag',
    LATENCY_BUCKETS,
  );
  const upstreamSeconds = histogram(
    'turnpike_relay_upstream_duration_seconds',
    'Time relay calls spent waiting on upstreams, by route and stream flag',
    LATENCY_BUCKETS,
  );
  const overheadSeconds = histogram(
    'turnpike_relay_overhead_seconds',
    'Time the gateway itself added to relay calls (total minus upstream), by route and stream flag',
    OVERHEAD_BUCKETS,
  );
  const firstTokenSeconds = histogram(
    'turnpike_relay_time_to_first_token_seconds',
    'Time to the first token of a stream, or to the whole answer of a non-stream call',
    LATENCY_BUCKETS,
  );
  const configApplySeconds = histogram(
    'turnpike_config_apply_seconds',
    'Configuration changes from their event being published to this relay applying them',
    CONFIG_APPLY_BUCKETS,
  );
  const configApplySeries = configApplySeconds.series({});
  const genAi = createGenAiMetrics(registry);
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });

  function modelLabel(model: string): string {
    const now = performance.now();
    if (now - modelLabelsBornAt > labelTtlMs || modelLabels.size >= MAX_CACHED_MODEL_LABELS) {
      modelLabels = new Map();
      modelLabelsBornAt = now;
    }
    let label = modelLabels.get(model);
    if (label === undefined) {
      label = isKnownModel(model) ? model : OTHER_MODEL;
      modelLabels.set(model, label);
    }
    return label;
  }

  function callCell(route: string, model: string, channelId: number, status: number, isStream: boolean) {
    let byModel = callCells.get(route);
    if (byModel === undefined) {
      byModel = new Map();
      callCells.set(route, byModel);
    }
    let byChannel = byModel.get(model);
    if (byChannel === undefined) {
      byChannel = new Map();
      byModel.set(model, byChannel);
    }
    let byStatus = byChannel.get(channelId);
    if (byStatus === undefined) {
      byStatus = new Map();
      byChannel.set(channelId, byStatus);
    }
    let pair = byStatus.get(status);
    if (pair === undefined) {
      pair = [undefined, undefined];
      byStatus.set(status, pair);
    }
    const index = isStream ? 1 : 0;
    let cell = pair[index];
    if (cell === undefined) {
      cell = {
        labels: {
          route,
          model,
          channel: String(channelId),
          status: String(status),
          stream: String(isStream),
        },
        value: 0,
      };
      pair[index] = cell;
      callCellList.push(cell);
    }
    return cell;
  }

  function totalsOf(model: string): ModelTotals {
    let totals = modelTotals.get(model);
    if (totals === undefined) {
      totals = { labels: { model }, promptTokens: 0, cacheReadTokens: 0, completionTokens: 0, quota: 0 };
      modelTotals.set(model, totals);
    }
    return totals;
  }

  function histogramsOf(route: string, isStream: boolean): CallHistograms {
    let pair = routeHistograms.get(route);
    if (pair === undefined) {
      const make = (stream: string): CallHistograms => {
        const labels = { route, stream };
        return {
          total: totalSeconds.series(labels),
          upstream: upstreamSeconds.series(labels),
          overhead: overheadSeconds.series(labels),
          firstToken: firstTokenSeconds.series(labels),
        };
      };
      pair = [make('false'), make('true')];
      routeHistograms.set(route, pair);
    }
    return pair[isStream ? 1 : 0];
  }

  return {
    registry,
    contentType: registry.contentType,
    get inflight() {
      return inflight;
    },
    modelLabel,

    recordAffinity(result) {
      affinity[result] += 1;
    },

    recordCall(call) {
      const model = modelLabel(call.model);
      callCell(call.route, model, call.channelId, call.status, call.isStream).value += 1;
      const totals = totalsOf(model);
      if (call.promptTokens > 0) totals.promptTokens += call.promptTokens;
      if ((call.cacheReadTokens ?? 0) > 0) totals.cacheReadTokens += call.cacheReadTokens ?? 0;
      if (call.completionTokens > 0) totals.completionTokens += call.completionTokens;
      if (call.quota > 0) totals.quota += call.quota;
      const series = histogramsOf(call.route, call.isStream);
      totalSeconds.observe(series.total, call.totalMs / 1000);
      upstreamSeconds.observe(series.upstream, call.upstreamMs / 1000);
      overheadSeconds.observe(series.overhead, Math.max(0, call.totalMs - call.upstreamMs) / 1000);
      if (call.frtMs !== undefined) firstTokenSeconds.observe(series.firstToken, call.frtMs / 1000);
      genAi.record(call, model, call.servedModel === undefined ? model : modelLabel(call.servedModel));
      if (isRelayTracingOn()) traceCall(call);
    },

    get activeStreams() {
      return activeStreams;
    },

    streamStarted(response) {
      activeStreams += 1;
      response.once('close', streamClosed);
    },

    realtimeSessionStarted() {
      activeStreams += 1;
      realtimeSessions += 1;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        activeStreams -= 1;
        realtimeSessions -= 1;
      };
    },

    requestStarted(routePattern) {
      inflight += 1;
      const route = routePattern === undefined || routePattern.includes('*') ? UNMATCHED_ROUTE : routePattern;
      let cells = requestCells.get(route);
      if (cells === undefined) {
        cells = { route, byStatus: new Map() };
        requestCells.set(route, cells);
      }
      return cells;
    },

    requestEnded(route, status) {
      inflight -= 1;
      let cell = route.byStatus.get(status);
      if (cell === undefined) {
        cell = { labels: { route: route.route, status: String(status) }, value: 0 };
        route.byStatus.set(status, cell);
      }
      cell.value += 1;
    },

    observeChannelStates(collect) {
      channelStates = collect;
    },
    observeRedisDegraded(isDegraded) {
      redisDegraded = isDegraded;
    },
    observeConfigVersion(version) {
      configVersion = version;
    },
    observeLogQueueDepth(depth) {
      logQueueDepth = depth;
    },
    observeSettlementBacklog(backlog) {
      settlementBacklog = backlog;
    },
    recordConfigApply(seconds) {
      configApplySeconds.observe(configApplySeries, seconds);
    },
    recordBillingAdjustment(reason) {
      billingAdjustments.set(reason, (billingAdjustments.get(reason) ?? 0) + 1);
    },
    recordRateLimited(scope = LimitScope.User, kind = LimitKind.Requests) {
      const name = `${scope}:${kind}`;
      const cell = rateLimited.get(name);
      if (cell) cell.value += 1;
      else rateLimited.set(name, { labels: { scope, kind }, value: 1 });
    },

    render: () => registry.metrics(),
  };
}

/**
 * Counts one request when its response closes: the in-flight gauge goes up on arrival and down on close, which
 * also happens when the client leaves in the middle of a stream (status 499 then).
 */
export function countRequest(
  metrics: RelayMetrics,
  routePattern: string | undefined,
  raw: ServerResponse,
): void {
  const route = metrics.requestStarted(routePattern);
  // A response that closes before it was ended lost its client. One listener, added with `on` (a response closes
  // once): each listener, and each `once` wrapper, is an allocation per request (make bench).
  raw.on('close', () => {
    metrics.requestEnded(route, raw.writableEnded ? raw.statusCode : CLIENT_CLOSED_STATUS);
  });
}

/** Counts every request of `scope` (the /v1 plugin) Fastify serves; the front door counts its own. */
export function registerMetricsHooks(scope: FastifyInstance, metrics: RelayMetrics): void {
  scope.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    countRequest(metrics, request.routeOptions.url, reply.raw);
    done();
  });
}

/**
 * `GET /metrics` in the Prometheus text format. With a token set, scrapers must send `Authorization: Bearer
 * <token>`; without one the route is open (keep it off the public ingress then).
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: RelayMetrics,
  token: string | undefined,
): void {
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  app.get('/metrics', async (request, reply) => {
    if (expected !== undefined) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .send({ error: { message: 'metrics need a valid bearer token', type: 'invalid_request_error' } });
      }
    }
    const text = await metrics.render();
    return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}

/**
 * Whether a model may be a label value: it is routed (in any group) or has a price in one of `priceTables`
 * (`ModelRatio`, `ModelPrice`). Both are bounded by what administrators configure, unlike the names callers send.
 */
export function isModelKnown(
  model: string,
  table: RoutingTable,
  ...priceTables: readonly Readonly<Record<string, unknown>>[]
): boolean {
  for (const prices of priceTables) if (Object.hasOwn(prices, model)) return true;
  const routed = routeModelName(model);
  for (const models of table.values()) if (models.has(routed)) return true;
  return false;
}

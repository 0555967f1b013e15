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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, type Histogram, Registry } from 'prom-client';
import { type RoutingTable, routeModelName } from '../routing/pick.ts';

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
}

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
  completionTokens: number;
  quota: number;
}

/** One label set of a {@link SeriesHistogram}: bucket counts (not cumulative), sum and count. */
interface HistogramSeries {
  readonly labels: Record<string, string>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram whose series are objects the caller keeps, so an observation is a bucket search and
 * three additions (prom-client's own Histogram hashes the label object on every observation). It is registered
 * on the prom-client registry, which renders it like any other histogram.
 */
class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all: HistogramSeries[] = [];
  private readonly bounds: readonly number[];
  private readonly boundLabels: readonly string[];
  readonly name: string;
  readonly help: string;

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.bounds = bounds;
    this.boundLabels = [...bounds.map(String), '+Inf'];
  }

  series(labels: Record<string, string>): HistogramSeries {
    const series = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.all.push(series);
    return series;
  }

  observe(series: HistogramSeries, value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i += 1;
    series.counts[i] = (series.counts[i] as number) + 1;
    series.sum += value;
    series.count += 1;
  }

  reset(): void {
    for (const series of this.all) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  async get() {
    const values: { metricName: string; labels: Record<string, string>; value: number }[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      for (let i = 0; i < series.counts.length; i += 1) {
        cumulative += series.counts[i] as number;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...series.labels, le: this.boundLabels[i] as string },
          value: cumulative,
        });
      }
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
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
  const histogram = (name: string, help: string, buckets: readonly number[]) => {
    const metric = new SeriesHistogram(name, help, buckets);
    // The registry renders any object with prom-client's metric shape; its type names only its own classes.
    registry.registerMetric(metric as unknown as Histogram);
    return metric;
  };
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
      totals = { labels: { model }, promptTokens: 0, completionTokens: 0, quota: 0 };
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

    recordCall(call) {
      const model = modelLabel(call.model);
      callCell(call.route, model, call.channelId, call.status, call.isStream).value += 1;
      const totals = totalsOf(model);
      if (call.promptTokens > 0) totals.promptTokens += call.promptTokens;
      if (call.completionTokens > 0) totals.completionTokens += call.completionTokens;
      if (call.quota > 0) totals.quota += call.quota;
      const series = histogramsOf(call.route, call.isStream);
      totalSeconds.observe(series.total, call.totalMs / 1000);
      upstreamSeconds.observe(series.upstream, call.upstreamMs / 1000);
      overheadSeconds.observe(series.overhead, Math.max(0, call.totalMs - call.upstreamMs) / 1000);
      if (call.frtMs !== undefined) firstTokenSeconds.observe(series.firstToken, call.frtMs / 1000);
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
  // 'close' comes after 'finish' when the response was complete, alone when the client left first.
  let isFinished = false;
  raw.once('finish', () => {
    isFinished = true;
  });
  raw.once('close', () => {
    metrics.requestEnded(route, isFinished ? raw.statusCode : CLIENT_CLOSED_STATUS);
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

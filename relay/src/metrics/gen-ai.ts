/**
 * Metrics named by the OpenTelemetry semantic conventions for generative AI
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/), in the names a Prometheus exporter gives
 * them (dots to underscores, the unit as a suffix) and with the bucket boundaries the conventions advise, so
 * dashboards written for other GenAI servers read ours:
 *
 * - `gen_ai_client_token_usage{gen_ai_token_type}`: tokens per call by type (input, output, cache_read,
 *   cache_creation, reasoning). A gateway is a client of its upstreams: what it was billed is what it reports.
 * - `gen_ai_server_request_duration_seconds`: arrival to the end of the answer, failures included (`error_type`).
 * - `gen_ai_server_time_to_first_token_seconds`: arrival to the first token of a successful stream.
 * - `gen_ai_server_time_per_output_token_seconds`: after the first token, per further output token.
 *
 * Labels are the conventions' attributes: `gen_ai_operation_name`, `gen_ai_provider_name`,
 * `gen_ai_request_model`, `gen_ai_response_model`, `error_type` (empty on success). Models are bounded the way
 * the relay's other labels are (routed or priced, else `other`); there is no user, token or key label.
 * Like the rest of the relay's metrics, a call updates series found through nested maps of label values.
 */
import type { Registry } from 'prom-client';
import type { RelayCall } from './relay-metrics.ts';
import { type HistogramSeries, registerSeriesHistogram } from './series-histogram.ts';

/** `gen_ai.server.request.duration` buckets (seconds) advised by the conventions. */
export const GEN_AI_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** `gen_ai.server.time_to_first_token` buckets (seconds). */
export const GEN_AI_FIRST_TOKEN_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];
/** `gen_ai.server.time_per_output_token` buckets (seconds). */
export const GEN_AI_PER_TOKEN_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5,
];
/** `gen_ai.client.token.usage` buckets (tokens): powers of four up to 64 Mi. */
export const GEN_AI_TOKEN_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** The token types of `gen_ai_client_token_usage`. */
export const GenAiTokenType = {
  Input: 'input',
  Output: 'output',
  CacheRead: 'cache_read',
  CacheCreation: 'cache_creation',
  Reasoning: 'reasoning',
} as const;
export type GenAiTokenType = (typeof GenAiTokenType)[keyof typeof GenAiTokenType];

/** `gen_ai.provider.name` of a call whose pipeline did not say (the OpenAI-compatible channels). */
export const DEFAULT_GEN_AI_PROVIDER = 'openai';

/**
 * `gen_ai.operation.name` of a relay route pattern. The conventions name chat, text_completion, embeddings and
 * generate_content; the other endpoints keep a name of their own (the conventions allow custom values).
 */
export function genAiOperationOf(route: string): string {
  if (route.endsWith('/chat/completions') || route === '/v1/responses' || route === '/v1/messages')
    return 'chat';
  if (route === '/v1/completions') return 'text_completion';
  if (route.endsWith('/embeddings')) return 'embeddings';
  if (route.startsWith('/v1beta/')) return 'generate_content';
  if (route.startsWith('/v1/images/')) return 'image_generation';
  if (route.startsWith('/v1/audio/')) return route === '/v1/audio/speech' ? 'speech' : 'transcription';
  if (route === '/v1/rerank') return 'rerank';
  if (route === '/v1/moderations') return 'moderation';
  return 'other';
}

interface GenAiSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly duration: HistogramSeries;
  readonly firstToken: HistogramSeries;
  readonly perToken: HistogramSeries;
  readonly tokens: Partial<Record<GenAiTokenType, HistogramSeries>>;
}

type Level<T> = Map<string, T>;
/** route → provider → request model → response model → error type. */
type SeriesTree = Level<Level<Level<Level<Level<GenAiSeries>>>>>;

function child<T>(level: Level<T>, key: string, make: () => T): T {
  let found = level.get(key);
  if (found === undefined) {
    found = make();
    level.set(key, found);
  }
  return found;
}

export interface GenAiMetrics {
  /** Records one call; the model labels are already bounded (`modelLabel`). */
  record(call: RelayCall, requestModel: string, responseModel: string): void;
}

export function createGenAiMetrics(registry: Registry): GenAiMetrics {
  const duration = registerSeriesHistogram(
    registry,
    'gen_ai_server_request_duration_seconds',
    'GenAI calls from arrival to the end of the answer (OpenTelemetry gen_ai.server.request.duration)',
    GEN_AI_DURATION_BUCKETS,
  );
  const firstToken = registerSeriesHistogram(
    registry,
    'gen_ai_server_time_to_first_token_seconds',
    'Time to the first token of successful streams (OpenTelemetry gen_ai.server.time_to_first_token)',
    GEN_AI_FIRST_TOKEN_BUCKETS,
  );
  const perToken = registerSeriesHistogram(
    registry,
    'gen_ai_server_time_per_output_token_seconds',
    'Time per output token after the first, successful streams (OpenTelemetry gen_ai.server.time_per_output_token)',
    GEN_AI_PER_TOKEN_BUCKETS,
  );
  const tokenUsage = registerSeriesHistogram(
    registry,
    'gen_ai_client_token_usage',
    'Tokens per call by type: input, output, cache_read, cache_creation, reasoning (OpenTelemetry gen_ai.client.token.usage)',
    GEN_AI_TOKEN_BUCKETS,
  );
  const tree: SeriesTree = new Map();
  const operations = new Map<string, string>();

  const seriesOf = (
    route: string,
    provider: string,
    requestModel: string,
    responseModel: string,
    errorType: string,
  ): GenAiSeries => {
    const byProvider = child(tree, route, () => new Map());
    const byRequestModel = child(byProvider, provider, () => new Map());
    const byResponseModel = child(byRequestModel, requestModel, () => new Map());
    const byError = child(byResponseModel, responseModel, () => new Map());
    return child(byError, errorType, () =>
      makeSeries(route, provider, requestModel, responseModel, errorType),
    );
  };

  function makeSeries(
    route: string,
    provider: string,
    requestModel: string,
    responseModel: string,
    errorType: string,
  ): GenAiSeries {
    const operation = child(operations, route, () => genAiOperationOf(route));
    const labels = {
      gen_ai_operation_name: operation,
      gen_ai_provider_name: provider,
      gen_ai_request_model: requestModel,
      gen_ai_response_model: responseModel,
      error_type: errorType,
    };
    return {
      labels,
      duration: duration.series(labels),
      firstToken: firstToken.series(labels),
      perToken: perToken.series(labels),
      tokens: {},
    };
  }

  /** Token series are made on first use: most calls never report cache or reasoning tokens. */
  const observeTokens = (series: GenAiSeries, type: GenAiTokenType, count: number | undefined) => {
    if (count === undefined || count <= 0) return;
    let tokens = series.tokens[type];
    if (tokens === undefined) {
      tokens = tokenUsage.series({ ...series.labels, gen_ai_token_type: type });
      series.tokens[type] = tokens;
    }
    tokenUsage.observe(tokens, count);
  };

  return {
    record(call, requestModel, responseModel) {
      const isSuccess = call.status < 400;
      const errorType = call.errorType ?? (isSuccess ? '' : String(call.status));
      const series = seriesOf(
        call.route,
        call.provider ?? DEFAULT_GEN_AI_PROVIDER,
        requestModel,
        responseModel,
        errorType,
      );
      duration.observe(series.duration, call.totalMs / 1000);
      observeTokens(series, GenAiTokenType.Input, call.promptTokens);
      observeTokens(series, GenAiTokenType.Output, call.completionTokens);
      observeTokens(series, GenAiTokenType.CacheRead, call.cacheReadTokens);
      observeTokens(series, GenAiTokenType.CacheCreation, call.cacheCreationTokens);
      observeTokens(series, GenAiTokenType.Reasoning, call.reasoningTokens);
      if (!isSuccess || !call.isStream || call.frtMs === undefined) return;
      firstToken.observe(series.firstToken, call.frtMs / 1000);
      if (call.completionTokens > 1)
        perToken.observe(series.perToken, (call.totalMs - call.frtMs) / 1000 / (call.completionTokens - 1));
    },
  };
}

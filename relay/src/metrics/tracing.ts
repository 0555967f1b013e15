/**
 * OpenTelemetry spans of relay calls, off unless a process turns them on (`tracing-register.ts`, loaded with
 * `node --import` when the chart's `tracing.enabled` is set). Off, a call costs one `undefined` check.
 *
 * The spans are made from what `recordCall` reports when a call ends: a SERVER span per call named by the GenAI
 * conventions (`{gen_ai.operation.name} {gen_ai.request.model}`) with its `gen_ai.*` attributes and the request
 * id, an event at the first token, and children for each pipeline step and each upstream attempt. The pipeline
 * only records marks (`startSteps`, `markStep`, `markAttempt`: a time and a name, nothing while tracing is off);
 * the spans are built from them when the call ends, so no span object lives through a stream.
 */
import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { DEFAULT_GEN_AI_PROVIDER, genAiOperationOf } from './gen-ai.ts';
import type { RelayCall } from './relay-metrics.ts';

const TRACER_NAME = 'turnpike-relay';

let tracer: Tracer | undefined;

/** Turns relay spans on in this process, on `provider` (default: the one registered globally). */
export function enableRelayTracing(provider: TracerProvider = trace.getTracerProvider()): void {
  tracer = provider.getTracer(TRACER_NAME);
}

export function disableRelayTracing(): void {
  tracer = undefined;
}

export function isRelayTracingOn(): boolean {
  return tracer !== undefined;
}

/** Where a call's time went: the end of each pipeline step and each upstream attempt (`performance.now()` ms). */
export interface StepMarks {
  readonly startedAt: number;
  readonly steps: { readonly name: string; readonly at: number }[];
  readonly attempts: {
    readonly channelId: number;
    readonly startedAt: number;
    readonly endedAt: number;
    readonly failed: boolean;
  }[];
}

/** Marks for one call, or undefined while tracing is off (every mark is then a no-op). */
export function startSteps(startedAt = performance.now()): StepMarks | undefined {
  return tracer === undefined ? undefined : { startedAt, steps: [], attempts: [] };
}

/** The step `name` ended now (it began where the previous step ended). */
export function markStep(marks: StepMarks | undefined, name: string): void {
  marks?.steps.push({ name, at: performance.now() });
}

/** One upstream attempt, from its request sent to its answer read (or its failure). */
export function markAttempt(
  marks: StepMarks | undefined,
  channelId: number,
  startedAt: number,
  failed: boolean,
): void {
  marks?.attempts.push({ channelId, startedAt, endedAt: performance.now(), failed });
}

/** Child spans of `parent` from the marks: one per step, one CLIENT span per attempt. */
function traceMarks(
  parent: Span,
  marks: StepMarks,
  attributes: Attributes,
  toWall: (at: number) => number,
): void {
  if (tracer === undefined) return;
  const within = trace.setSpan(context.active(), parent);
  let previous = marks.startedAt;
  for (const step of marks.steps) {
    tracer
      .startSpan(`turnpike ${step.name}`, { startTime: toWall(previous), attributes }, within)
      .end(toWall(step.at));
    previous = step.at;
  }
  for (const [i, attempt] of marks.attempts.entries()) {
    const span = tracer.startSpan(
      `upstream attempt ${i + 1}`,
      {
        kind: SpanKind.CLIENT,
        startTime: toWall(attempt.startedAt),
        attributes: { ...attributes, 'turnpike.channel.id': attempt.channelId },
      },
      within,
    );
    if (attempt.failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(toWall(attempt.endedAt));
  }
}

/** Spans of one finished call; `endedAt` is the wall-clock time (ms) the call ended. No-op while tracing is off. */
export function traceCall(call: RelayCall, endedAt = Date.now()): void {
  if (tracer === undefined) return;
  const operation = genAiOperationOf(call.route);
  const startedAt = endedAt - call.totalMs;
  const isFailure = call.status >= 400;
  const attributes: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': call.provider ?? DEFAULT_GEN_AI_PROVIDER,
    'gen_ai.request.model': call.model,
    'gen_ai.response.model': call.servedModel ?? call.model,
    'gen_ai.usage.input_tokens': call.promptTokens,
    'gen_ai.usage.output_tokens': call.completionTokens,
    'http.route': call.route,
    'http.response.status_code': call.status,
    'turnpike.channel.id': call.channelId,
    'turnpike.stream': call.isStream,
    'turnpike.quota': call.quota,
  };
  if (call.requestId !== undefined) attributes['turnpike.request.id'] = call.requestId;
  if (call.cacheReadTokens) attributes['gen_ai.usage.cache_read.input_tokens'] = call.cacheReadTokens;
  if (call.cacheCreationTokens)
    attributes['gen_ai.usage.cache_creation.input_tokens'] = call.cacheCreationTokens;
  if (call.reasoningTokens) attributes['gen_ai.usage.reasoning.output_tokens'] = call.reasoningTokens;
  if (isFailure) attributes['error.type'] = call.errorType ?? String(call.status);
  const span = tracer.startSpan(`${operation} ${call.model}`, {
    kind: SpanKind.SERVER,
    startTime: startedAt,
    attributes,
  });
  if (call.frtMs !== undefined) span.addEvent('gen_ai.first_token', undefined, startedAt + call.frtMs);
  if (call.steps) {
    const offset = endedAt - performance.now();
    const stepAttributes: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.request.model': call.model,
      ...(call.requestId === undefined ? {} : { 'turnpike.request.id': call.requestId }),
    };
    traceMarks(span, call.steps, stepAttributes, (at) => at + offset);
  }
  if (isFailure) span.setStatus({ code: SpanStatusCode.ERROR });
  if (call.upstreamMs > 0) {
    const upstream = tracer.startSpan(
      'upstream',
      {
        kind: SpanKind.CLIENT,
        startTime: endedAt - call.upstreamMs,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': attributes['gen_ai.provider.name'] as string,
          'gen_ai.request.model': call.servedModel ?? call.model,
          'turnpike.channel.id': call.channelId,
          ...(call.requestId === undefined ? {} : { 'turnpike.request.id': call.requestId }),
        },
      },
      trace.setSpan(context.active(), span),
    );
    upstream.end(endedAt);
  }
  span.end(endedAt);
}

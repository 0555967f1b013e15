/**
 * `node --import ./relay/src/metrics/tracing-register.ts server/src/main.ts`: starts the OpenTelemetry SDK before
 * the server, configured by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER, ...), and turns the relay's spans on. Without this import nothing is traced (the chart adds
 * it when `tracing.enabled` is set). Spans still buffered are flushed when the process is asked to stop.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { enableRelayTracing } from './tracing.ts';

const sdk = new NodeSDK({ autoDetectResources: true });
sdk.start();
enableRelayTracing();

const flush = () => {
  void sdk.shutdown().catch(() => {});
};
process.once('SIGTERM', flush);
process.once('SIGINT', flush);
process.once('beforeExit', flush);

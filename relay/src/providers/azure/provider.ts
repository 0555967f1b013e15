/**
 * Azure OpenAI (https://learn.microsoft.com/en-us/azure/ai-services/openai/reference): OpenAI's format under
 * `<base>/openai/deployments/<deployment>/<path>?api-version=<version>`, the key in `api-key`. The deployment is
 * the upstream model (after the channel's model mapping) with its dots removed (`gpt-3.5-turbo` →
 * `gpt-35-turbo`, Azure's own names); the version is the channel's `other`, or {@link AZURE_DEFAULT_API_VERSION}.
 * The Responses API has no deployment in its path: `<base>/openai/responses?api-version=`, the deployment as the
 * body's model, and a version of its own when the channel names none (the GA default does not serve it). A content-filter refusal (400, `content_filter`) is the caller's error: its filter result is
 * named in the message, it is never retried and never counts against the channel. A 429's `retry-after` rests the
 * channel that long when cool-downs are on (ADR 0008), instead of counting toward one.
 */

import type { IncomingHttpHeaders } from 'node:http';
import { isRecord } from '@turnpike/core/json';
import type { Endpoint, RelayError } from '../../contract.ts';
import { openAiFormat } from '../../formats/openai/format.ts';
import { baseUrlOf, callOf, type Provider } from '../provider.ts';

/** The current GA data-plane version. */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** The Responses API came with the preview versions (2025-03-01-preview on): a channel naming none gets this one. */
const AZURE_RESPONSES_API_VERSION = '2025-04-01-preview';

/** What Azure serves of OpenAI's endpoints (no moderations, no rerank). */
const AZURE_ENDPOINTS: ReadonlySet<Endpoint> = new Set<Endpoint>([
  'chat',
  'completions',
  'embeddings',
  'responses',
  'image-generation',
  'image-edit',
  'speech',
  'transcription',
  'translation',
]);

/** Azure's deployment name of a model: dots are not allowed in deployment names, so Azure's own drop them. */
export const deploymentOf = (model: string): string => model.replaceAll('.', '');

/** The categories a content filter flagged, e.g. `hate (high), violence (medium)`. */
function filteredCategories(result: unknown): string {
  if (!isRecord(result)) return '';
  const flagged: string[] = [];
  for (const [category, verdict] of Object.entries(result))
    if (isRecord(verdict) && verdict.filtered === true)
      flagged.push(typeof verdict.severity === 'string' ? `${category} (${verdict.severity})` : category);
  return flagged.join(', ');
}

function readAzureError(status: number, body: string, headers: IncomingHttpHeaders): RelayError {
  const error = openAiFormat.readError(status, body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const inner = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
  if (status === 400 && inner?.code === 'content_filter') {
    const innerError = isRecord(inner.innererror) ? inner.innererror : {};
    const flagged = filteredCategories(innerError.content_filter_result);
    return {
      ...error,
      type: 'invalid_request_error',
      code: 'content_filter',
      message: flagged ? `${error.message} (filtered: ${flagged})` : error.message,
    };
  }
  const retryAfter = Number(headers['retry-after']);
  if (status === 429 && Number.isFinite(retryAfter) && retryAfter > 0)
    return {
      ...error,
      message: `${error.message} (retry after ${retryAfter} s)`,
      upstreamRetryAfterSeconds: retryAfter,
    };
  return error;
}

export const azureProvider: Provider = {
  id: 'azure',
  format: openAiFormat,
  genAiName: 'azure.ai.openai',
  supports: (endpoint) => AZURE_ENDPOINTS.has(endpoint),
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = openAiFormat.writeRequest(channel, input);
    const version = encodeURIComponent(channel.other.trim() || AZURE_DEFAULT_API_VERSION);
    const base = baseUrlOf(channel);
    const named = written.body.kind === 'json' ? written.body.json.model : undefined;
    const deployment = deploymentOf(typeof named === 'string' ? named : written.model);
    if (input.endpoint === 'responses' && written.body.kind === 'json') {
      const body = { ...written.body, json: { ...written.body.json, model: deployment } };
      const responsesVersion = channel.other.trim() ? version : AZURE_RESPONSES_API_VERSION;
      const url = `${base}/openai/responses?api-version=${responsesVersion}`;
      return callOf({ ...written, body }, url, { 'api-key': channel.key ?? '' }, channel);
    }
    const path = written.path.replace(/^\/v1\//, '');
    const url = `${base}/openai/deployments/${encodeURIComponent(deployment)}/${path}?api-version=${version}`;
    return callOf(written, url, { 'api-key': channel.key ?? '' }, channel);
  },
  readError: readAzureError,
};

/**
 * OpenAI's Batch API (https://platform.openai.com/docs/api-reference/batch) and Azure OpenAI's
 * (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/batch): the lines are uploaded as a `batch`
 * file (`POST /files`), the batch created on it (`POST /batches`), read (`GET /batches/{id}`), cancelled
 * (`POST /batches/{id}/cancel`), and its output and error files read (`GET /files/{id}/content`). OpenAI: under
 * `<base>/v1`, `Authorization: Bearer`. Azure: under `<base>/openai` with `?api-version=` (the channel's, else
 * 2024-10-21), the key in `api-key`, each line's model the deployment and its url without `/v1`.
 */
import { randomBytes } from 'node:crypto';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import type { Dispatcher } from 'undici';
import { deploymentOf } from '../providers/azure/provider.ts';
import { baseUrlOf } from '../providers/provider.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import {
  type BatchApi,
  callUpstream,
  countOf,
  jsonLines,
  jsonOf,
  type OutputLine,
  type UpstreamState,
} from './upstream.ts';

const AZURE_BATCH_API_VERSION = '2024-10-21';

const isAzure = (channel: RelayChannel) => channel.type === ProviderTypeId.Azure;

/** The URL of `path` on an OpenAI (`<base>/v1…`) or Azure OpenAI (`<base>/openai…?api-version=`) channel. */
export function openAiUrlOf(channel: RelayChannel, path: string): string {
  if (!isAzure(channel)) return `${baseUrlOf(channel)}/v1${path}`;
  const version = channel.other.trim() || AZURE_BATCH_API_VERSION;
  return `${baseUrlOf(channel)}/openai${path}?api-version=${encodeURIComponent(version)}`;
}

/** The channel's credential and extra headers (Azure's `api-key`, else a bearer key). */
export function openAiHeadersOf(channel: RelayChannel): Record<string, string> {
  const key = channel.key ?? '';
  if (isAzure(channel)) return { ...channel.headers, 'api-key': key };
  return {
    ...channel.headers,
    authorization: `Bearer ${key}`,
    ...(channel.organization ? { 'openai-organization': channel.organization } : {}),
  };
}

/** A multipart body of one file and its purpose. */
export function fileForm(
  content: string | Buffer,
  filename: string,
  purpose = 'batch',
): { body: Buffer; contentType: string } {
  const boundary = `turnpike-${randomBytes(12).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${purpose}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
        'Content-Type: application/jsonl\r\n\r\n',
    ),
    typeof content === 'string' ? Buffer.from(content) : content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function stateOf(batch: Record<string, unknown>): UpstreamState {
  const counts = (batch.request_counts ?? {}) as Record<string, unknown>;
  return {
    status: typeof batch.status === 'string' ? batch.status : 'in_progress',
    completed: countOf(counts.completed),
    failed: countOf(counts.failed),
    errors: batch.errors ?? undefined,
    outputRef: typeof batch.output_file_id === 'string' ? batch.output_file_id : undefined,
    errorRef: typeof batch.error_file_id === 'string' ? batch.error_file_id : undefined,
  };
}

async function fileLines(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  id: string | undefined,
): Promise<OutputLine[]> {
  if (!id) return [];
  const text = await callUpstream(
    dispatcher,
    openAiUrlOf(channel, `/files/${encodeURIComponent(id)}/content`),
    { method: 'GET', headers: openAiHeadersOf(channel) },
    'reading a batch result file',
  );
  return jsonLines(text) as unknown as OutputLine[];
}

export const openAiBatchApi: BatchApi = {
  async submit(channel, dispatcher, batch) {
    const azure = isAzure(channel);
    const model = azure ? deploymentOf(batch.upstreamModel) : batch.upstreamModel;
    const url = azure ? batch.endpoint.replace(/^\/v1/, '') : batch.endpoint;
    const content = batch.lines
      .map((line) =>
        JSON.stringify({ custom_id: line.customId, method: 'POST', url, body: { ...line.body, model } }),
      )
      .join('\n');
    const form = fileForm(`${content}\n`, 'batch-input.jsonl');
    const file = jsonOf(
      await callUpstream(
        dispatcher,
        openAiUrlOf(channel, '/files'),
        {
          method: 'POST',
          headers: { ...openAiHeadersOf(channel), 'content-type': form.contentType },
          body: form.body,
        },
        'uploading a batch input file',
      ),
    );
    if (typeof file.id !== 'string') throw new Error('the upstream answered a file upload without an id');
    const created = jsonOf(
      await callUpstream(
        dispatcher,
        openAiUrlOf(channel, '/batches'),
        {
          method: 'POST',
          headers: { ...openAiHeadersOf(channel), 'content-type': 'application/json' },
          body: JSON.stringify({ input_file_id: file.id, endpoint: url, completion_window: '24h' }),
        },
        'creating a batch',
      ),
    );
    if (typeof created.id !== 'string')
      throw new Error('the upstream answered a batch creation without an id');
    return { upstreamId: created.id, upstreamFileId: file.id };
  },

  async state(channel, dispatcher, upstreamId) {
    const text = await callUpstream(
      dispatcher,
      openAiUrlOf(channel, `/batches/${encodeURIComponent(upstreamId)}`),
      { method: 'GET', headers: openAiHeadersOf(channel) },
      'reading a batch',
    );
    return stateOf(jsonOf(text));
  },

  async cancel(channel, dispatcher, upstreamId) {
    await callUpstream(
      dispatcher,
      openAiUrlOf(channel, `/batches/${encodeURIComponent(upstreamId)}/cancel`),
      { method: 'POST', headers: openAiHeadersOf(channel) },
      'cancelling a batch',
    );
  },

  async results(channel, dispatcher, state) {
    return {
      output: await fileLines(channel, dispatcher, state.outputRef),
      errors: await fileLines(channel, dispatcher, state.errorRef),
    };
  },
};

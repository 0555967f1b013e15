/**
 * Fake Batch APIs for tests, speaking each provider's documented wire:
 * - OpenAI (https://platform.openai.com/docs/api-reference/batch, /files): `POST /v1/files` (multipart, purpose
 *   `batch`), `POST /v1/batches`, `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`,
 *   `GET /v1/files/{id}/content`; as Azure OpenAI the same under `/openai/...?api-version=` with the key in `api-key`;
 * - Anthropic (https://docs.anthropic.com/en/api/creating-message-batches): `POST /v1/messages/batches`,
 *   `GET /v1/messages/batches/{id}`, `POST /v1/messages/batches/{id}/cancel`, and the results JSON Lines at the
 *   batch's `results_url`.
 * A line's answer carries the usage the test gives (`usageOf`); a custom id starting with `fail` fails. Tests move a
 * batch along by hand (`start`, `complete`, `finishCancel`) and read what the gateway sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeBatchKind = 'openai' | 'azure' | 'anthropic';

export interface LineUsage {
  readonly input: number;
  readonly output: number;
}

export interface FakeBatch {
  readonly id: string;
  /** The lines as the upstream got them: `{ custom_id, url, body }` (OpenAI) or `{ custom_id, params }` (Anthropic). */
  readonly lines: Record<string, unknown>[];
  status: 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'cancelling' | 'cancelled' | 'failed';
  /** How many lines were answered when it ended (all, or those before a cancel). */
  answered: number;
}

export interface FakeBatchUpstream {
  readonly url: string;
  readonly batches: Map<string, FakeBatch>;
  readonly requests: { method: string; path: string; headers: IncomingMessage['headers'] }[];
  /** Uploaded files: id -> content. */
  readonly files: Map<string, string>;
  start(id: string): void;
  complete(id: string): void;
  /** Ends a cancelled batch with only its first `answered` lines answered. */
  finishCancel(id: string, answered: number): void;
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, body: unknown, type = 'application/json') {
  response.writeHead(status, { 'content-type': type });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeBatchUpstream(options: {
  kind: FakeBatchKind;
  key: string;
  usageOf: (customId: string) => LineUsage;
}): Promise<FakeBatchUpstream> {
  const { kind, key, usageOf } = options;
  const batches = new Map<string, FakeBatch>();
  const files = new Map<string, string>();
  const requests: FakeBatchUpstream['requests'] = [];
  let sequence = 0;
  let url = '';

  const root = kind === 'azure' ? '/openai' : '/v1';
  const isAuthorised = (request: IncomingMessage) =>
    kind === 'azure'
      ? request.headers['api-key'] === key
      : kind === 'anthropic'
        ? request.headers['x-api-key'] === key && request.headers['anthropic-version'] === '2023-06-01'
        : request.headers.authorization === `Bearer ${key}`;

  function openAiBatch(batch: FakeBatch) {
    const done = batch.status === 'completed' || batch.status === 'cancelled';
    const answered = batch.lines.slice(0, batch.answered);
    const failed = answered.filter((line) => String(line.custom_id).startsWith('fail')).length;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors: null,
      input_file_id: 'file-upstream',
      completion_window: '24h',
      status: batch.status,
      output_file_id: done ? `file-out-${batch.id}` : null,
      error_file_id: done && failed > 0 ? `file-err-${batch.id}` : null,
      created_at: 1_700_000_000,
      request_counts: { total: batch.lines.length, completed: answered.length - failed, failed },
      metadata: null,
    };
  }

  function openAiOutput(batch: FakeBatch, errors: boolean): string {
    return batch.lines
      .slice(0, batch.answered)
      .filter((line) => String(line.custom_id).startsWith('fail') === errors)
      .map((line, index) => {
        const customId = String(line.custom_id);
        if (errors)
          return JSON.stringify({
            id: `batch_req_e${index}`,
            custom_id: customId,
            response: {
              status_code: 400,
              request_id: `req_e${index}`,
              body: { error: { message: 'bad request', type: 'invalid_request_error' } },
            },
            error: null,
          });
        const usage = usageOf(customId);
        return JSON.stringify({
          id: `batch_req_${index}`,
          custom_id: customId,
          response: {
            status_code: 200,
            request_id: `req_${index}`,
            body: {
              id: `chatcmpl-${index}`,
              object: 'chat.completion',
              created: 1_711_652_795,
              model: (line.body as { model: string }).model,
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: `answer to ${customId}` },
                  logprobs: null,
                  finish_reason: 'stop',
                },
              ],
              usage: {
                prompt_tokens: usage.input,
                completion_tokens: usage.output,
                total_tokens: usage.input + usage.output,
              },
            },
          },
          error: null,
        });
      })
      .join('\n');
  }

  function anthropicBatch(batch: FakeBatch) {
    const ended = batch.status === 'completed' || batch.status === 'cancelled';
    const answered = batch.lines.slice(0, batch.answered);
    const errored = answered.filter((line) => String(line.custom_id).startsWith('fail')).length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : batch.status === 'cancelling' ? 'canceling' : 'in_progress',
      request_counts: {
        processing: ended ? 0 : batch.lines.length,
        succeeded: ended ? answered.length - errored : 0,
        errored: ended ? errored : 0,
        canceled: ended ? batch.lines.length - answered.length : 0,
        expired: 0,
      },
      ended_at: ended ? '2024-08-20T18:37:24.100435Z' : null,
      created_at: '2024-08-20T18:37:24.100435Z',
      expires_at: '2024-08-21T18:37:24.100435Z',
      cancel_initiated_at:
        batch.status === 'cancelled' || batch.status === 'cancelling' ? '2024-08-20T18:40:00Z' : null,
      results_url: ended ? `${url}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  function anthropicResults(batch: FakeBatch): string {
    return batch.lines
      .map((line, index) => {
        const customId = String(line.custom_id);
        if (index >= batch.answered)
          return JSON.stringify({ custom_id: customId, result: { type: 'canceled' } });
        if (customId.startsWith('fail'))
          return JSON.stringify({
            custom_id: customId,
            result: {
              type: 'errored',
              error: { type: 'error', error: { type: 'invalid_request_error', message: 'bad request' } },
            },
          });
        const usage = usageOf(customId);
        return JSON.stringify({
          custom_id: customId,
          result: {
            type: 'succeeded',
            message: {
              id: `msg_${index}`,
              type: 'message',
              role: 'assistant',
              model: (line.params as { model: string }).model,
              content: [{ type: 'text', text: `answer to ${customId}` }],
              stop_reason: 'end_turn',
              stop_sequence: null,
              usage: { input_tokens: usage.input, output_tokens: usage.output },
            },
          },
        });
      })
      .join('\n');
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const parsed = new URL(request.url ?? '/', 'http://fake');
    const path = parsed.pathname;
    requests.push({ method: request.method ?? '', path, headers: request.headers });
    if (!isAuthorised(request))
      return send(response, 401, { error: { message: 'invalid key', type: 'invalid_request_error' } });
    if (kind === 'azure' && !parsed.searchParams.get('api-version'))
      return send(response, 404, { error: { code: '404', message: 'Resource not found' } });
    const body = await readBody(request);
    if (kind === 'anthropic') {
      if (request.method === 'POST' && path === '/v1/messages/batches') {
        const { requests: lines } = JSON.parse(body.toString()) as { requests: Record<string, unknown>[] };
        sequence += 1;
        const batch: FakeBatch = { id: `msgbatch_${sequence}`, lines, status: 'in_progress', answered: 0 };
        batches.set(batch.id, batch);
        return send(response, 200, anthropicBatch(batch));
      }
      const match = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
      const batch = match && batches.get(match[1] ?? '');
      if (!batch)
        return send(response, 404, {
          type: 'error',
          error: { type: 'not_found_error', message: 'no batch' },
        });
      if (match?.[2] === '/cancel') {
        batch.status = 'cancelling';
        return send(response, 200, anthropicBatch(batch));
      }
      if (match?.[2] === '/results')
        return send(response, 200, anthropicResults(batch), 'application/binary');
      return send(response, 200, anthropicBatch(batch));
    }
    if (request.method === 'POST' && path === `${root}/files`) {
      const form = await new Response(
        new Blob([new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length)]),
        {
          headers: { 'content-type': String(request.headers['content-type']) },
        },
      ).formData();
      const file = form.get('file');
      if (form.get('purpose') !== 'batch' || file === null || typeof file === 'string')
        return send(response, 400, { error: { message: 'purpose batch and a file are required' } });
      sequence += 1;
      const id = `file-upstream-${sequence}`;
      files.set(id, await file.text());
      return send(response, 200, {
        id,
        object: 'file',
        bytes: file.size,
        created_at: 1_700_000_000,
        filename: file.name,
        purpose: 'batch',
        status: 'processed',
      });
    }
    if (request.method === 'POST' && path === `${root}/batches`) {
      const input = JSON.parse(body.toString()) as { input_file_id: string; endpoint: string };
      const content = files.get(input.input_file_id);
      if (content === undefined) return send(response, 400, { error: { message: 'no such file' } });
      sequence += 1;
      const lines = content
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const batch: FakeBatch = { id: `batch_upstream_${sequence}`, lines, status: 'validating', answered: 0 };
      batches.set(batch.id, batch);
      return send(response, 200, openAiBatch(batch));
    }
    const batchMatch = new RegExp(`^${root}/batches/([^/]+)(/cancel)?$`).exec(path);
    if (batchMatch) {
      const batch = batches.get(batchMatch[1] ?? '');
      if (!batch) return send(response, 404, { error: { message: 'no such batch' } });
      if (batchMatch[2] === '/cancel') batch.status = 'cancelling';
      return send(response, 200, openAiBatch(batch));
    }
    const fileMatch = new RegExp(`^${root}/files/file-(out|err)-([^/]+)/content$`).exec(path);
    const outBatch = fileMatch && batches.get(fileMatch[2] ?? '');
    if (outBatch)
      return send(
        response,
        200,
        openAiOutput(outBatch, fileMatch?.[1] === 'err'),
        'application/octet-stream',
      );
    return send(response, 404, { error: { message: `no route ${request.method} ${path}` } });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) =>
      send(response, 500, { error: { message: String(err) } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = (id: string) => {
    const batch = batches.get(id);
    if (!batch) throw new Error(`no fake batch ${id}`);
    return batch;
  };
  return {
    url,
    batches,
    requests,
    files,
    start(id) {
      get(id).status = 'in_progress';
    },
    complete(id) {
      const batch = get(id);
      batch.status = 'completed';
      batch.answered = batch.lines.length;
    },
    finishCancel(id, answered) {
      const batch = get(id);
      batch.status = 'cancelled';
      batch.answered = answered;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

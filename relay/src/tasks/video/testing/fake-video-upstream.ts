/**
 * A fake OpenAI video API for tests, speaking the documented wire format
 * (https://platform.openai.com/docs/api-reference/videos): `POST /v1/videos` (JSON or multipart with
 * `input_reference`), `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content?variant=`, `POST /v1/videos/{id}/remix`,
 * `DELETE /v1/videos/{id}`, answering `video` objects and OpenAI error bodies. As an Azure OpenAI resource it serves
 * the same under `/openai/v1/videos` and wants the key in `api-key`. Any other credential is a 401. Tests move each
 * job along by hand (`advance`, `complete`, `fail`) and read what the gateway sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeVideoJob {
  id: string;
  object: 'video';
  model: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: { code: string; message: string } | null;
  prompt: string | null;
  remixed_from_video_id: string | null;
  seconds: string;
  size: string;
}

export interface RecordedVideoRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  /** JSON bodies parsed; form fields as text, files as `{ filename, size, type }`. */
  readonly body: Record<string, unknown> | undefined;
}

export interface FakeVideoUpstream {
  readonly url: string;
  readonly requests: RecordedVideoRequest[];
  readonly jobs: Map<string, FakeVideoJob>;
  /** The next create answers with this status and body instead of accepting. */
  refuseNext(status: number, body: unknown): void;
  advance(id: string, progress: number): void;
  /** Finishes the job; `seconds` is the clip's real length (default: what was asked). */
  complete(id: string, seconds?: string): void;
  fail(id: string, message: string): void;
  close(): Promise<void>;
}

/** The bytes the fake serves as every video (an MP4 `ftyp` box and some filler). */
export const FAKE_MP4 = Buffer.concat([
  Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex'),
  Buffer.alloc(256 * 1024, 7),
]);
export const FAKE_THUMBNAIL = Buffer.from('fake-webp-thumbnail');

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const openAiError = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code },
});

async function readBody(request: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return undefined;
  const type = request.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    const fields: Record<string, unknown> = {};
    for (const [name, value] of form.entries())
      fields[name] =
        typeof value === 'string' ? value : { filename: value.name, size: value.size, type: value.type };
    return fields;
  }
  return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
}

export async function startFakeVideoUpstream(options: {
  key: string;
  /** Azure OpenAI: `/openai/v1/videos`, `api-key`. */
  azure?: boolean;
}): Promise<FakeVideoUpstream> {
  const requests: RecordedVideoRequest[] = [];
  const jobs = new Map<string, FakeVideoJob>();
  let refusal: { status: number; body: unknown } | undefined;
  let sequence = 0;
  const root = options.azure ? '/openai/v1/videos' : '/v1/videos';
  const now = () => Math.floor(Date.now() / 1000);

  const newJob = (fields: Partial<FakeVideoJob>): FakeVideoJob => {
    sequence += 1;
    const job: FakeVideoJob = {
      id: `video_upstream_${sequence}_${Math.random().toString(36).slice(2, 8)}`,
      object: 'video',
      model: 'sora-2',
      status: 'queued',
      progress: 0,
      created_at: now(),
      completed_at: null,
      expires_at: null,
      error: null,
      prompt: null,
      remixed_from_video_id: null,
      seconds: '4',
      size: '720x1280',
      ...fields,
    };
    jobs.set(job.id, job);
    return job;
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://fake');
    const body = await readBody(request);
    const method = request.method ?? 'GET';
    requests.push({ method, path: url.pathname, query: url.searchParams, headers: request.headers, body });
    const authorised = options.azure
      ? request.headers['api-key'] === options.key
      : request.headers.authorization === `Bearer ${options.key}`;
    if (!authorised)
      return send(
        response,
        401,
        openAiError('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'),
      );
    if (!url.pathname.startsWith(root))
      return send(response, 404, openAiError('no such route', 'invalid_request_error'));
    const rest = url.pathname.slice(root.length).split('/').filter(Boolean);
    if (method === 'POST' && rest.length === 0) {
      if (refusal) {
        const { status, body: refused } = refusal;
        refusal = undefined;
        return send(response, status, refused);
      }
      const fields = body ?? {};
      if (typeof fields.prompt !== 'string')
        return send(
          response,
          400,
          openAiError('Missing required parameter: prompt', 'invalid_request_error'),
        );
      return send(
        response,
        200,
        newJob({
          model: String(fields.model ?? 'sora-2'),
          prompt: fields.prompt,
          seconds: String(fields.seconds ?? '4'),
          size: String(fields.size ?? '720x1280'),
        }),
      );
    }
    const job = rest[0] === undefined ? undefined : jobs.get(rest[0]);
    if (!job)
      return send(response, 404, openAiError('Video not found', 'invalid_request_error', 'not_found'));
    if (method === 'GET' && rest.length === 1) return send(response, 200, job);
    if (method === 'DELETE' && rest.length === 1) {
      jobs.delete(job.id);
      return send(response, 200, { id: job.id, object: 'video.deleted', deleted: true });
    }
    if (method === 'POST' && rest[1] === 'remix') {
      if (job.status !== 'completed')
        return send(response, 400, openAiError('Video is not completed', 'invalid_request_error'));
      return send(
        response,
        200,
        newJob({
          model: job.model,
          prompt: String(body?.prompt ?? ''),
          seconds: job.seconds,
          size: job.size,
          remixed_from_video_id: job.id,
        }),
      );
    }
    if (method === 'GET' && rest[1] === 'content') {
      if (job.status !== 'completed')
        return send(response, 400, openAiError('Video is not ready yet', 'invalid_request_error'));
      const variant = url.searchParams.get('variant') ?? 'video';
      const bytes = variant === 'video' ? FAKE_MP4 : FAKE_THUMBNAIL;
      response.writeHead(200, {
        'content-type': variant === 'video' ? 'video/mp4' : 'image/webp',
        'content-length': String(bytes.length),
      });
      return response.end(bytes);
    }
    return send(response, 404, openAiError('no such route', 'invalid_request_error'));
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) =>
      send(response, 500, openAiError(String(err), 'server_error')),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const job = (id: string) => {
    const found = jobs.get(id);
    if (!found) throw new Error(`no upstream job ${id}`);
    return found;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    jobs,
    refuseNext(status, body) {
      refusal = { status, body };
    },
    advance(id, progress) {
      Object.assign(job(id), { status: 'in_progress', progress });
    },
    complete(id, seconds) {
      const found = job(id);
      Object.assign(found, {
        status: 'completed',
        progress: 100,
        completed_at: now(),
        expires_at: now() + 3600,
        seconds: seconds ?? found.seconds,
      });
    },
    fail(id, message) {
      Object.assign(job(id), {
        status: 'failed',
        error: { code: 'moderation_blocked', message },
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

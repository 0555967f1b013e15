/**
 * A fake Vidu enterprise API for tests, speaking its documented wire format: every call wants `Authorization: Token
 * <key>` of the one key it was started with (else 401 `{ reason }`); `POST /ent/v2/text2video` and
 * `/ent/v2/img2video` answer `{ task_id, state: "created", … }`, `GET /ent/v2/tasks/{id}/creations` `{ id, state,
 * err_code, creations }`; the clip is served from a public path that wants no credentials.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedViduRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown> | undefined;
}

interface ViduTask {
  id: string;
  state: 'created' | 'queueing' | 'processing' | 'success' | 'failed';
  err_code: string;
  creations: { id: string; url: string; cover_url: string }[];
}

export interface FakeViduUpstream {
  readonly url: string;
  readonly requests: RecordedViduRequest[];
  process(taskId: string): void;
  succeed(taskId: string): void;
  fail(taskId: string, errCode: string): void;
  close(): Promise<void>;
}

export const FAKE_VIDU_MP4 = Buffer.concat([
  Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex'),
  Buffer.alloc(20 * 1024, 9),
]);

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startFakeViduUpstream(key: string): Promise<FakeViduUpstream> {
  const requests: RecordedViduRequest[] = [];
  const tasks = new Map<string, ViduTask>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw === '' ? undefined : (JSON.parse(raw) as Record<string, unknown>);
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const method = request.method ?? 'GET';
    requests.push({ method, path, headers: request.headers, body });
    if (path.startsWith('/cdn/')) {
      if (request.headers.authorization !== undefined)
        return send(response, 400, { reason: 'no credentials here' });
      response.writeHead(200, {
        'content-type': 'video/mp4',
        'content-length': String(FAKE_VIDU_MP4.length),
      });
      return response.end(FAKE_VIDU_MP4);
    }
    if (request.headers.authorization !== `Token ${key}`)
      return send(response, 401, { code: 401, reason: 'Unauthorized', message: 'invalid token' });
    const submit = /^\/ent\/v2\/(text2video|img2video)$/.exec(path);
    if (method === 'POST' && submit) {
      const isImage = submit[1] === 'img2video';
      if (
        typeof body?.model !== 'string' ||
        typeof body.prompt !== 'string' ||
        typeof body.duration !== 'number' ||
        body.duration < 1 ||
        body.duration > 10 ||
        (isImage && !(Array.isArray(body.images) && body.images.length === 1))
      )
        return send(response, 400, { code: 400, reason: 'BadRequest', message: 'invalid parameters' });
      sequence += 1;
      const task: ViduTask = { id: `${800000 + sequence}`, state: 'created', err_code: '', creations: [] };
      tasks.set(task.id, task);
      return send(response, 200, {
        task_id: task.id,
        state: 'created',
        model: body.model,
        prompt: body.prompt,
        duration: body.duration,
        ...(isImage ? { images: body.images } : { aspect_ratio: body.aspect_ratio ?? '16:9' }),
        credits: 4,
        created_at: new Date().toISOString(),
      });
    }
    const query = /^\/ent\/v2\/tasks\/([\w-]+)\/creations$/.exec(path);
    const task = query ? tasks.get(query[1] as string) : undefined;
    if (method === 'GET' && task) return send(response, 200, { ...task, credits: 4, payload: '' });
    return send(response, 404, { code: 404, reason: 'TaskNotFound', message: 'task not found' });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) => send(response, 500, { reason: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const task = (id: string) => {
    const found = tasks.get(id);
    if (!found) throw new Error(`no task ${id}`);
    return found;
  };
  return {
    url,
    requests,
    process(id) {
      task(id).state = 'processing';
    },
    succeed(id) {
      Object.assign(task(id), {
        state: 'success',
        creations: [{ id: `c${id}`, url: `${url}/cdn/${id}.mp4`, cover_url: `${url}/cdn/${id}.jpg` }],
      });
    },
    fail(id, errCode) {
      Object.assign(task(id), { state: 'failed', err_code: errCode });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

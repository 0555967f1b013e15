/**
 * A fake Volcano Ark video generation API for tests, speaking its documented wire format: every call wants
 * `Authorization: Bearer <key>` of the key it was started with (else 401 with Ark's `{ error: { code, message } }`);
 * `POST /api/v3/contents/generations/tasks` reads the text commands (`--dur`, `--rs`, `--rt`) as Ark does and
 * answers `{ id }`, `GET …/tasks/{id}` the task (`status`, `content.video_url`, `duration`, `resolution`); the clip is
 * served from a public path that wants no credentials.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedSeedanceRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown> | undefined;
}

interface SeedanceTask {
  id: string;
  model: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  duration: number;
  resolution: string;
  ratio: string;
  content?: { video_url: string };
  error: { code: string; message: string } | null;
}

export interface FakeSeedanceUpstream {
  readonly url: string;
  readonly requests: RecordedSeedanceRequest[];
  run(taskId: string): void;
  succeed(taskId: string, duration: number): void;
  fail(taskId: string, code: string, message: string): void;
  close(): Promise<void>;
}

export const FAKE_SEEDANCE_MP4 = Buffer.concat([
  Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex'),
  Buffer.alloc(28 * 1024, 3),
]);

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startFakeSeedanceUpstream(key: string): Promise<FakeSeedanceUpstream> {
  const requests: RecordedSeedanceRequest[] = [];
  const tasks = new Map<string, SeedanceTask>();
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
        return send(response, 400, { message: 'no credentials here' });
      response.writeHead(200, {
        'content-type': 'video/mp4',
        'content-length': String(FAKE_SEEDANCE_MP4.length),
      });
      return response.end(FAKE_SEEDANCE_MP4);
    }
    if (request.headers.authorization !== `Bearer ${key}`)
      return send(response, 401, {
        error: { code: 'AuthenticationError', message: 'the API key is invalid', type: 'Unauthorized' },
      });
    if (method === 'POST' && path === '/api/v3/contents/generations/tasks') {
      const content = Array.isArray(body?.content) ? (body.content as Record<string, unknown>[]) : [];
      const text = content.find((part) => part.type === 'text')?.text;
      if (typeof body?.model !== 'string' || typeof text !== 'string')
        return send(response, 400, {
          error: { code: 'InvalidParameter', message: 'model and content are required' },
        });
      const command = (name: string) => new RegExp(`--${name} (\\S+)`).exec(text)?.[1];
      const duration = Number(command('dur') ?? 5);
      if (!Number.isInteger(duration) || duration < 2 || duration > 12)
        return send(response, 400, {
          error: { code: 'InvalidParameter', message: 'duration must be 2 to 12' },
        });
      sequence += 1;
      const task: SeedanceTask = {
        id: `cgt-2025${sequence}-${Math.random().toString(36).slice(2, 7)}`,
        model: body.model,
        status: 'queued',
        duration,
        resolution: command('rs') ?? '720p',
        ratio: command('rt') ?? 'adaptive',
        error: null,
      };
      tasks.set(task.id, task);
      return send(response, 200, { id: task.id });
    }
    const query = /^\/api\/v3\/contents\/generations\/tasks\/([\w-]+)$/.exec(path);
    const task = query ? tasks.get(query[1] as string) : undefined;
    if (method === 'GET' && task)
      return send(response, 200, { ...task, created_at: 1_750_000_000, updated_at: 1_750_000_060, seed: 11 });
    return send(response, 404, { error: { code: 'ResourceNotFound', message: 'task not found' } });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) =>
      send(response, 500, { error: { message: String(err) } }),
    );
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
    run(id) {
      task(id).status = 'running';
    },
    succeed(id, duration) {
      Object.assign(task(id), {
        status: 'succeeded',
        duration,
        content: { video_url: `${url}/cdn/${id}.mp4` },
      });
    },
    fail(id, code, message) {
      Object.assign(task(id), { status: 'failed', error: { code, message } });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

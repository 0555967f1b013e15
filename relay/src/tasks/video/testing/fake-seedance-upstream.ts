/**
 * A fake Volcano Ark video generation API for tests, speaking its documented wire format: every call wants
 * `Authorization: Bearer <key>` of the key it was started with (else 401 with Ark's `{ error: { code, message } }`);
 * `POST /api/v3/contents/generations/tasks` reads the text commands (`--dur`, `--rs`, `--rt`) as Ark does and
 * answers `{ id }`, `GET …/tasks/{id}` the task (`status`, `content.video_url`, `duration`, `resolution`); the clip is
 * served from a public path that wants no credentials.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fakeMp4, readRequest, sendJson as send, serveClip, startFakeHost } from './fake-video-host.ts';

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

export const FAKE_SEEDANCE_MP4 = fakeMp4(28, 3);

export async function startFakeSeedanceUpstream(key: string): Promise<FakeSeedanceUpstream> {
  const requests: RecordedSeedanceRequest[] = [];
  const tasks = new Map<string, SeedanceTask>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const { method, path, body } = await readRequest(request);
    requests.push({ method, path, headers: request.headers, body });
    if (serveClip(request, response, path, FAKE_SEEDANCE_MP4)) return;
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

  const host = await startFakeHost(handle, (message) => ({ error: { message: message } }));
  url = host.url;
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
    close: host.close,
  };
}

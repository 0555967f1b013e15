/**
 * A fake Vidu enterprise API for tests, speaking its documented wire format: every call wants `Authorization: Token
 * <key>` of the one key it was started with (else 401 `{ reason }`); `POST /ent/v2/text2video` and
 * `/ent/v2/img2video` answer `{ task_id, state: "created", … }`, `GET /ent/v2/tasks/{id}/creations` `{ id, state,
 * err_code, creations }`; the clip is served from a public path that wants no credentials.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fakeMp4, readRequest, sendJson as send, serveClip, startFakeHost } from './fake-video-host.ts';

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

export const FAKE_VIDU_MP4 = fakeMp4(20, 9);

export async function startFakeViduUpstream(key: string): Promise<FakeViduUpstream> {
  const requests: RecordedViduRequest[] = [];
  const tasks = new Map<string, ViduTask>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const { method, path, body } = await readRequest(request);
    requests.push({ method, path, headers: request.headers, body });
    if (serveClip(request, response, path, FAKE_VIDU_MP4)) return;
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

  const host = await startFakeHost(handle, (message) => ({ reason: message }));
  url = host.url;
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
    close: host.close,
  };
}

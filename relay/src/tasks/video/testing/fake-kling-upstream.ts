/**
 * A fake Kling API for tests, speaking its documented wire format: every call wants `Authorization: Bearer <JWT>`,
 * an HS256 token whose `iss` is the access key, signed with the secret key and valid now (else 401 with Kling's
 * `{ code, message }`); `POST /v1/videos/{text2video,image2video}` answers `{ code: 0, data: { task_id,
 * task_status } }`, `GET /v1/videos/<kind>/<task_id>` the task, with `task_result.videos[]` once it succeeded; the
 * clip itself is served from a public CDN path that wants no credentials.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fakeMp4, readRequest, sendJson as send, serveClip, startFakeHost } from './fake-video-host.ts';

export interface RecordedKlingRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

interface KlingTask {
  task_id: string;
  task_status: 'submitted' | 'processing' | 'succeed' | 'failed';
  task_status_msg: string;
  task_result?: { videos: { id: string; url: string; duration: string }[] };
}

export interface FakeKlingUpstream {
  readonly url: string;
  readonly requests: RecordedKlingRequest[];
  process(taskId: string): void;
  succeed(taskId: string, duration: string): void;
  fail(taskId: string, message: string): void;
  close(): Promise<void>;
}

export const FAKE_KLING_MP4 = fakeMp4(32, 5);

/** Whether `token` is a valid Kling JWT of this key pair right now. */
function isValidToken(token: string, access: string, secret: string): boolean {
  const [head, payload, signature] = token.split('.');
  if (!head || !payload || !signature) return false;
  const expected = createHmac('sha256', secret).update(`${head}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  const header = JSON.parse(Buffer.from(head, 'base64url').toString()) as { alg?: string; typ?: string };
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as {
    iss?: string;
    exp?: number;
    nbf?: number;
  };
  const now = Math.floor(Date.now() / 1000);
  return (
    header.alg === 'HS256' &&
    header.typ === 'JWT' &&
    claims.iss === access &&
    typeof claims.exp === 'number' &&
    claims.exp > now &&
    typeof claims.nbf === 'number' &&
    claims.nbf <= now
  );
}

export async function startFakeKlingUpstream(access: string, secret: string): Promise<FakeKlingUpstream> {
  const requests: RecordedKlingRequest[] = [];
  const tasks = new Map<string, KlingTask>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const { method, path, body } = await readRequest(request);
    requests.push({ method, path, headers: request.headers, body });
    if (serveClip(request, response, path, FAKE_KLING_MP4)) return;
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token || !isValidToken(token, access, secret))
      return send(response, 401, { code: 1004, message: 'Auth failed', request_id: 'r' });
    const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(path);
    if (method === 'POST' && submit) {
      if (typeof body?.prompt !== 'string' || !['5', '10'].includes(String(body.duration)))
        return send(response, 400, { code: 1201, message: 'invalid parameters', request_id: 'r' });
      sequence += 1;
      const task: KlingTask = {
        task_id: `kt${sequence}${Math.random().toString(36).slice(2, 8)}`,
        task_status: 'submitted',
        task_status_msg: '',
      };
      tasks.set(task.task_id, task);
      return send(response, 200, {
        code: 0,
        message: 'SUCCEED',
        request_id: 'r',
        data: { task_id: task.task_id, task_status: 'submitted' },
      });
    }
    const query = /^\/v1\/videos\/(text2video|image2video)\/([\w-]+)$/.exec(path);
    const task = query ? tasks.get(query[2] as string) : undefined;
    if (method === 'GET' && task)
      return send(response, 200, { code: 0, message: 'SUCCEED', request_id: 'r', data: task });
    return send(response, 404, { code: 1203, message: 'task not found', request_id: 'r' });
  }

  const host = await startFakeHost(handle, (message) => ({ code: 5000, message: message }));
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
      task(id).task_status = 'processing';
    },
    succeed(id, duration) {
      Object.assign(task(id), {
        task_status: 'succeed',
        task_result: { videos: [{ id: `v-${id}`, url: `${url}/cdn/${id}.mp4`, duration }] },
      });
    },
    fail(id, message) {
      Object.assign(task(id), { task_status: 'failed', task_status_msg: message });
    },
    close: host.close,
  };
}

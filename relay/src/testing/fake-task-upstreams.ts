/**
 * Fake task upstreams for tests, speaking the real wire formats: a Midjourney-Proxy
 * (https://github.com/novicezk/midjourney-proxy: `mj-api-secret` header, `/mj/submit/*` answering
 * `{code, description, result}`, task objects from `/mj/task/{id}/fetch` and `/mj/task/list-by-condition`, image
 * seeds; the Plus additions: `upload-discord-images` answering the URLs as `result`, region and custom-zoom buttons
 * answering code 21 with the task waiting in MODAL, video tasks finishing with `videoUrl` / `videoUrls`) that also
 * hosts the result images, and a Suno-API (https://github.com/Suno-API/Suno-API: Bearer key,
 * `/suno/submit/{music,lyrics}` answering `{code:"success", data:<task id>}`, `/suno/fetch {ids}`). Tests move
 * each task along by hand (`progress`, `succeed`, `fail`) and read what the gateway sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedTaskRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

export interface FakeTaskServer<Task> {
  readonly url: string;
  readonly requests: RecordedTaskRequest[];
  readonly tasks: Map<string, Task>;
  /** The next submit answers with this body (and status) instead of accepting. */
  refuseNext(status: number, body: unknown): void;
  close(): Promise<void>;
}

/** A tiny PNG (1×1), the result image the fake proxy hosts. */
export const FAKE_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function listen(
  handle: (request: IncomingMessage, response: ServerResponse, body: unknown, url: string) => void,
  requests: RecordedTaskRequest[],
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const path = (request.url ?? '/').split('?')[0] as string;
      requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body });
      handle(request, response, body, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface FakeMjTask {
  id: string;
  action: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  imageUrl: string;
  status: string;
  progress: string;
  failReason: string;
  buttons: { customId: string; emoji: string; label: string; type: number; style: number }[];
  properties: Record<string, unknown>;
  videoUrl?: string;
  videoUrls?: { url: string }[];
}

export interface FakeMidjourney extends FakeTaskServer<FakeMjTask> {
  progress(id: string, progress: string): void;
  succeed(id: string): void;
  fail(id: string, reason: string): void;
}

/** `firstId`: where task ids start (two fakes in one test keep their ids apart, as two real proxies would). */
export async function startFakeMidjourney(
  key: string,
  options: { firstId?: number } = {},
): Promise<FakeMidjourney> {
  const requests: RecordedTaskRequest[] = [];
  const tasks = new Map<string, FakeMjTask>();
  let refusal: { status: number; body: unknown } | undefined;
  let sequence = options.firstId ?? 1_700_000_000_000;
  const server = await listen((request, response, body, origin) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    if (path.startsWith('/images/')) {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(FAKE_PNG.length) });
      response.end(FAKE_PNG);
      return;
    }
    if (request.headers['mj-api-secret'] !== key)
      return json(response, 401, { code: 401, description: 'invalid mj-api-secret' });
    const route = path.replace(/^\/mj-(fast|turbo|relax)/, '');
    const submit = /^\/mj\/(?:submit\/([a-z-]+)|(insight-face)\/swap)$/.exec(route);
    if (submit && request.method === 'POST') {
      if (refusal) {
        const { status, body: answer } = refusal;
        refusal = undefined;
        return json(response, status, answer);
      }
      sequence += 1;
      const id = String(sequence);
      const input = (body ?? {}) as Record<string, unknown>;
      if (submit[1] === 'upload-discord-images') {
        const images = Array.isArray(input.base64Array) ? input.base64Array : [];
        return json(response, 200, {
          code: 1,
          description: 'success',
          result: images.map((_, index) => `${origin}/attachments/${id}-${index}.png`),
        });
      }
      // A region or custom-zoom button opens a window: the task waits in MODAL and the answer is code 21.
      const customId = typeof input.customId === 'string' ? input.customId : '';
      const opensWindow = customId.startsWith('MJ::Inpaint') || customId.startsWith('MJ::CustomZoom');
      tasks.set(id, {
        id,
        action: submit[2]
          ? 'SWAP_FACE'
          : opensWindow
            ? customId.startsWith('MJ::Inpaint')
              ? 'INPAINT'
              : 'CUSTOM_ZOOM'
            : (submit[1] as string).toUpperCase().replace(/-/g, '_'),
        prompt: typeof input.prompt === 'string' ? input.prompt : '',
        promptEn: typeof input.prompt === 'string' ? input.prompt : '',
        description: '/imagine',
        state: typeof input.state === 'string' ? input.state : '',
        submitTime: Date.now(),
        startTime: 0,
        finishTime: 0,
        imageUrl: '',
        status: opensWindow ? 'MODAL' : 'SUBMITTED',
        progress: '0%',
        failReason: '',
        buttons: [],
        properties: {},
      });
      if (opensWindow)
        return json(response, 200, {
          code: 21,
          description: 'Waiting for window confirm',
          result: id,
          properties: { finalPrompt: typeof input.prompt === 'string' ? input.prompt : '', remix: true },
        });
      return json(response, 200, { code: 1, description: 'submitted', result: id, properties: {} });
    }
    const fetchOne = /^\/mj\/task\/([^/]+)\/fetch$/.exec(route);
    if (fetchOne) {
      const task = tasks.get(decodeURIComponent(fetchOne[1] as string));
      return task ? json(response, 200, task) : json(response, 404, { code: 4, description: 'not found' });
    }
    const seed = /^\/mj\/task\/([^/]+)\/image-seed$/.exec(route);
    if (seed) {
      const task = tasks.get(decodeURIComponent(seed[1] as string));
      return task
        ? json(response, 200, { code: 1, description: 'success', result: `seed-${task.id}` })
        : json(response, 200, { code: 4, description: 'task not found' });
    }
    if (route === '/mj/task/list-by-condition' && request.method === 'POST') {
      const ids = ((body ?? {}) as { ids?: string[] }).ids ?? [];
      return json(
        response,
        200,
        ids.map((id) => tasks.get(id)).filter((task) => task !== undefined),
      );
    }
    json(response, 404, { code: 4, description: `no route ${path}` });
  }, requests);
  const update = (id: string, change: Partial<FakeMjTask>) => {
    const task = tasks.get(id);
    if (!task) throw new Error(`no fake task ${id}`);
    Object.assign(task, change);
  };
  return {
    url: server.url,
    requests,
    tasks,
    refuseNext(status, body) {
      refusal = { status, body };
    },
    progress(id, progress) {
      update(id, { status: 'IN_PROGRESS', progress, startTime: Date.now() });
    },
    succeed(id) {
      const isVideo = tasks.get(id)?.action === 'VIDEO';
      update(id, {
        status: 'SUCCESS',
        progress: '100%',
        finishTime: Date.now(),
        imageUrl: `${server.url}/images/${id}.png`,
        buttons: [{ customId: `MJ::JOB::upsample::1::${id}`, emoji: '', label: 'U1', type: 2, style: 2 }],
        ...(isVideo
          ? {
              videoUrl: `${server.url}/videos/${id}.mp4`,
              videoUrls: [{ url: `${server.url}/videos/${id}.mp4` }],
            }
          : {}),
      });
    },
    fail(id, reason) {
      update(id, { status: 'FAILURE', progress: '', failReason: reason, finishTime: Date.now() });
    },
    close: server.close,
  };
}

export interface FakeSunoTask {
  task_id: string;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  data: unknown;
}

export interface FakeSuno extends FakeTaskServer<FakeSunoTask> {
  progress(id: string, progress: string): void;
  succeed(id: string): void;
  fail(id: string, reason: string): void;
}

export async function startFakeSuno(key: string): Promise<FakeSuno> {
  const requests: RecordedTaskRequest[] = [];
  const tasks = new Map<string, FakeSunoTask>();
  let refusal: { status: number; body: unknown } | undefined;
  let sequence = 0;
  const server = await listen((request, response, body) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    if (request.headers.authorization !== `Bearer ${key}`)
      return json(response, 401, { code: 'unauthorized', message: 'invalid key', data: null });
    const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(path);
    if (submit && request.method === 'POST') {
      if (refusal) {
        const { status, body: answer } = refusal;
        refusal = undefined;
        return json(response, status, answer);
      }
      sequence += 1;
      const id = `suno-task-${sequence}-${Math.random().toString(36).slice(2, 8)}`;
      const now = Math.floor(Date.now() / 1000);
      tasks.set(id, {
        task_id: id,
        action: (submit[1] as string).toUpperCase(),
        status: 'SUBMITTED',
        fail_reason: '',
        submit_time: now,
        start_time: 0,
        finish_time: 0,
        progress: '0%',
        data: null,
      });
      return json(response, 200, { code: 'success', message: '', data: id });
    }
    if (path === '/suno/fetch' && request.method === 'POST') {
      const ids = ((body ?? {}) as { ids?: string[] }).ids ?? [];
      return json(response, 200, {
        code: 'success',
        message: '',
        data: ids.map((id) => tasks.get(id)).filter((task) => task !== undefined),
      });
    }
    json(response, 404, { code: 'not_found', message: `no route ${path}`, data: null });
  }, requests);
  const update = (id: string, change: Partial<FakeSunoTask>) => {
    const task = tasks.get(id);
    if (!task) throw new Error(`no fake task ${id}`);
    Object.assign(task, change);
  };
  return {
    url: server.url,
    requests,
    tasks,
    refuseNext(status, body) {
      refusal = { status, body };
    },
    progress(id, progress) {
      update(id, { status: 'IN_PROGRESS', progress, start_time: Math.floor(Date.now() / 1000) });
    },
    succeed(id) {
      update(id, {
        status: 'SUCCESS',
        progress: '100%',
        finish_time: Math.floor(Date.now() / 1000),
        data: [{ id: `${id}-clip`, audio_url: `${server.url}/audio/${id}.mp3`, title: 'Fake song' }],
      });
    },
    fail(id, reason) {
      update(id, { status: 'FAILURE', fail_reason: reason, finish_time: Math.floor(Date.now() / 1000) });
    },
    close: server.close,
  };
}

/**
 * A fake Gemini API serving Veo for tests, speaking its documented wire format
 * (https://ai.google.dev/gemini-api/docs/video): `POST /v1beta/models/{model}:predictLongRunning` answering a
 * long-running operation `{ name }`, `GET /v1beta/{name}` answering the operation (`done`, `error`,
 * `response.generateVideoResponse.generatedSamples[].video.uri`), and the file download, which redirects to
 * storage as the real file service does. Everything under /v1beta wants `x-goog-api-key`; storage must not get it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedVeoRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

interface Operation {
  name: string;
  done: boolean;
  error?: { code: number; message: string };
  response?: unknown;
}

export interface FakeVeoUpstream {
  readonly url: string;
  readonly requests: RecordedVeoRequest[];
  readonly operations: Map<string, Operation>;
  finish(name: string): void;
  fail(name: string, message: string): void;
  /** Done, but the safety filters removed the video. */
  filter(name: string, reason: string): void;
  close(): Promise<void>;
}

export const FAKE_VEO_MP4 = Buffer.concat([
  Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex'),
  Buffer.alloc(64 * 1024, 3),
]);

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const googleError = (code: number, message: string, status: string) => ({ error: { code, message, status } });

export async function startFakeVeoUpstream(key: string): Promise<FakeVeoUpstream> {
  const requests: RecordedVeoRequest[] = [];
  const operations = new Map<string, Operation>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const method = request.method ?? 'GET';
    requests.push({ method, path, headers: request.headers, body });
    if (path.startsWith('/storage/')) {
      if (request.headers['x-goog-api-key'] !== undefined)
        return send(response, 400, googleError(400, 'storage got an API key', 'INVALID_ARGUMENT'));
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(FAKE_VEO_MP4.length) });
      return response.end(FAKE_VEO_MP4);
    }
    if (request.headers['x-goog-api-key'] !== key)
      return send(
        response,
        400,
        googleError(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT'),
      );
    const submit = /^\/v1beta\/models\/([\w.-]+):predictLongRunning$/.exec(path);
    if (method === 'POST' && submit) {
      const instances = (body as { instances?: { prompt?: unknown }[] } | undefined)?.instances;
      if (typeof instances?.[0]?.prompt !== 'string')
        return send(response, 400, googleError(400, 'prompt is required', 'INVALID_ARGUMENT'));
      sequence += 1;
      const name = `models/${submit[1]}/operations/op${sequence}x${Math.random().toString(36).slice(2, 8)}`;
      operations.set(name, { name, done: false });
      return send(response, 200, { name });
    }
    const download = /^\/v1beta\/files\/([\w-]+):download$/.exec(path);
    if (method === 'GET' && download) {
      response.writeHead(302, { location: `${url}/storage/${download[1]}?signature=short-lived` });
      return response.end();
    }
    const operation = operations.get(path.replace(/^\/v1beta\//, ''));
    if (method === 'GET' && operation) return send(response, 200, operation);
    return send(response, 404, googleError(404, 'not found', 'NOT_FOUND'));
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) =>
      send(response, 500, googleError(500, String(err), 'INTERNAL')),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const operation = (name: string) => {
    const found = operations.get(name);
    if (!found) throw new Error(`no operation ${name}`);
    return found;
  };
  return {
    url,
    requests,
    operations,
    finish(name) {
      const file = `file${name.split('/').at(-1)}`;
      Object.assign(operation(name), {
        done: true,
        response: {
          '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
          generateVideoResponse: {
            generatedSamples: [{ video: { uri: `${url}/v1beta/files/${file}:download?alt=media` } }],
          },
        },
      });
    },
    fail(name, message) {
      Object.assign(operation(name), { done: true, error: { code: 400, message } });
    },
    filter(name, reason) {
      Object.assign(operation(name), {
        done: true,
        response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [reason] } },
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * A fake Jimeng (Volcengine visual API) for tests, speaking its documented wire format: every call is `POST
 * /?Action=…&Version=2022-08-31` and must carry a valid Volcengine HMAC-SHA256 signature of this key pair (checked
 * here from the request as received: canonical request, scope `<date>/cn-north-1/cv/request`, `X-Content-Sha256`
 * of the body, `X-Date` within 15 minutes), else 401 with Volcengine's `ResponseMetadata.Error`.
 * `CVSync2AsyncSubmitTask` answers `{ code: 10000, data: { task_id } }`, `CVSync2AsyncGetResult` `{ code: 10000,
 * data: { status, video_url } }`; the clip is served from a public path that wants no credentials.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fakeMp4, readRequest, sendJson as send, serveClip, startFakeHost } from './fake-video-host.ts';

export interface RecordedJimengRequest {
  readonly method: string;
  readonly path: string;
  readonly action: string | null;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown> | undefined;
}

interface JimengTask {
  reqKey: string;
  status: 'in_queue' | 'generating' | 'done' | 'expired';
  videoUrl?: string;
  /** A refusal reported by the result call (`code` not 10000). */
  refusal?: { code: number; message: string };
}

export interface FakeJimengUpstream {
  readonly url: string;
  readonly requests: RecordedJimengRequest[];
  generate(taskId: string): void;
  finish(taskId: string): void;
  refuse(taskId: string, code: number, message: string): void;
  close(): Promise<void>;
}

export const FAKE_JIMENG_MP4 = fakeMp4(24, 7);

const hex = (value: string) => createHash('sha256').update(value).digest('hex');
const mac = (key: string | Buffer, value: string) => createHmac('sha256', key).update(value).digest();
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Why the request's signature is not one of this key pair's, or undefined when it is. */
function signatureProblem(
  request: IncomingMessage,
  raw: string,
  access: string,
  secret: string,
): string | undefined {
  const match =
    /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([\w-]+)\/(\w+)\/request, SignedHeaders=([\w;-]+), Signature=([0-9a-f]{64})$/.exec(
      request.headers.authorization ?? '',
    );
  if (!match) return 'MissingAuthenticationToken';
  const [, ak, date, region, service, signedHeaders, signature] = match as unknown as string[];
  if (ak !== access) return 'InvalidAccessKey';
  if (region !== 'cn-north-1' || service !== 'cv') return 'InvalidCredentialScope';
  const xDate = String(request.headers['x-date'] ?? '');
  const when = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(xDate);
  if (!when || xDate.slice(0, 8) !== date) return 'InvalidTimestamp';
  const at = Date.UTC(+when[1]!, +when[2]! - 1, +when[3]!, +when[4]!, +when[5]!, +when[6]!);
  if (Math.abs(Date.now() - at) > 15 * 60_000) return 'SignatureExpired';
  if (request.headers['x-content-sha256'] !== hex(raw)) return 'ContentSha256Mismatch';
  const names = (signedHeaders as string).split(';');
  for (const required of ['host', 'x-date', 'x-content-sha256'])
    if (!names.includes(required)) return 'UnsignedHeader';
  const url = new URL(request.url ?? '/', 'http://fake');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonical = [
    request.method,
    url.pathname,
    query,
    names.map((n) => `${n}:${String(request.headers[n] ?? '').trim()}\n`).join(''),
    signedHeaders,
    hex(raw),
  ].join('\n');
  const scope = `${date}/${region}/${service}/request`;
  const key = mac(mac(mac(mac(secret, date as string), region as string), service as string), 'request');
  const expected = mac(key, ['HMAC-SHA256', xDate, scope, hex(canonical)].join('\n'));
  const given = Buffer.from(signature as string, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? undefined
    : 'SignatureDoesNotMatch';
}

export async function startFakeJimengUpstream(access: string, secret: string): Promise<FakeJimengUpstream> {
  const requests: RecordedJimengRequest[] = [];
  const tasks = new Map<string, JimengTask>();
  let sequence = 0;
  let url = '';

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const { method, url: parsed, path, raw, body } = await readRequest(request);
    const action = parsed.searchParams.get('Action');
    requests.push({ method, path, action, headers: request.headers, body });
    if (serveClip(request, response, path, FAKE_JIMENG_MP4)) return;
    const problem = signatureProblem(request, raw, access, secret);
    if (problem)
      return send(response, 401, {
        ResponseMetadata: {
          RequestId: 'r',
          Action: action,
          Version: '2022-08-31',
          Service: 'cv',
          Region: 'cn-north-1',
          Error: { CodeN: 100010, Code: problem, Message: 'the request signature is not valid' },
        },
      });
    if (request.method !== 'POST' || parsed.searchParams.get('Version') !== '2022-08-31')
      return send(response, 400, { code: 50400, message: 'Invalid Version' });
    if (action === 'CVSync2AsyncSubmitTask') {
      const hasImage = Array.isArray(body?.image_urls) || Array.isArray(body?.binary_data_base64);
      if (
        typeof body?.req_key !== 'string' ||
        typeof body.prompt !== 'string' ||
        ![121, 241].includes(body.frames as number) ||
        body.req_key.includes('_i2v_') !== hasImage
      )
        return send(response, 400, { code: 50400, message: 'Invalid Parameter', status: 50400 });
      sequence += 1;
      const taskId = `jt${sequence}${Math.random().toString(36).slice(2, 8)}`;
      tasks.set(taskId, { reqKey: body.req_key, status: 'in_queue' });
      return send(response, 200, {
        code: 10000,
        data: { task_id: taskId },
        message: 'Success',
        request_id: 'r',
        status: 10000,
      });
    }
    if (action === 'CVSync2AsyncGetResult') {
      const task = typeof body?.task_id === 'string' ? tasks.get(body.task_id) : undefined;
      if (!task || task.reqKey !== body?.req_key)
        return send(response, 200, {
          code: 10000,
          data: { status: 'not_found' },
          message: 'Success',
          request_id: 'r',
        });
      if (task.refusal) return send(response, 200, { ...task.refusal, data: null, request_id: 'r' });
      return send(response, 200, {
        code: 10000,
        data: { status: task.status, ...(task.videoUrl ? { video_url: task.videoUrl } : {}) },
        message: 'Success',
        request_id: 'r',
      });
    }
    return send(response, 404, { code: 50404, message: 'Action not found' });
  }

  const host = await startFakeHost(handle, (message) => ({ code: 50500, message: message }));
  url = host.url;
  const task = (id: string) => {
    const found = tasks.get(id);
    if (!found) throw new Error(`no task ${id}`);
    return found;
  };
  return {
    url,
    requests,
    generate(id) {
      task(id).status = 'generating';
    },
    finish(id) {
      Object.assign(task(id), { status: 'done', videoUrl: `${url}/cdn/${id}.mp4` });
    },
    refuse(id, code, message) {
      task(id).refusal = { code, message };
    },
    close: host.close,
  };
}

/**
 * Where a channel's video jobs live and how it is called.
 * - OpenAI (type 1): `<base>/v1/videos…`, `Authorization: Bearer <key>`
 *   (https://platform.openai.com/docs/api-reference/videos).
 * - Azure OpenAI (type 3): Sora 2 is served by Azure's v1 API with OpenAI's own schema, `<base>/openai/v1/videos…`,
 *   the key in `api-key`, the deployment named as `model`
 *   (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/video-generation).
 * - Sora (type 55): an OpenAI channel for video only, called exactly as OpenAI.
 * The channel's extra headers go first, so they can never replace the credential.
 */

import type { Readable } from 'node:stream';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { type Dispatcher, request } from 'undici';
import { baseUrlOf } from '../../providers/provider.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import { jimengApi } from './jimeng.ts';
import { klingApi } from './kling.ts';
import type { NativeVideoApi } from './native.ts';
import { seedanceApi } from './seedance.ts';
import { viduApi } from './vidu.ts';
import type { UpstreamAnswer } from './wire.ts';

/** The converted providers that share one shape (native.ts); Veo keeps its own calls (long-running operations). */
export const NATIVE_VIDEO_APIS: ReadonlyMap<number, NativeVideoApi> = new Map([
  [ProviderTypeId.Kling, klingApi],
  [ProviderTypeId.Jimeng, jimengApi],
  [ProviderTypeId.Vidu, viduApi],
  [ProviderTypeId.DoubaoVideo, seedanceApi],
]);

/**
 * Channel types that serve OpenAI's video API to clients: OpenAI, Sora (an OpenAI channel for video only) and Azure
 * as it is, Veo, Kling, Jimeng, Vidu and Doubao Seedance converted.
 */
export const VIDEO_CHANNEL_TYPES: readonly number[] = [
  ProviderTypeId.OpenAI,
  ProviderTypeId.Sora,
  ProviderTypeId.Azure,
  ProviderTypeId.GeminiVeo,
  ...NATIVE_VIDEO_APIS.keys(),
];

/** Types converted from their own task APIs: no remix, no thumbnail, no upstream delete. */
export const isNativeVideoType = (type: number): boolean =>
  type === ProviderTypeId.GeminiVeo || NATIVE_VIDEO_APIS.has(type);

/** The URL of `path` (`''`, `/<id>`, `/<id>/content`, ...) under the channel's video jobs. */
export function videoUrlOf(channel: RelayChannel, path: string): string {
  const root = channel.type === ProviderTypeId.Azure ? '/openai/v1/videos' : '/v1/videos';
  return `${baseUrlOf(channel)}${root}${path}`;
}

/** The channel's credential and extra headers. */
export function videoHeadersOf(channel: RelayChannel): Record<string, string> {
  const key = channel.key ?? '';
  const credential: Record<string, string> =
    channel.type === ProviderTypeId.Azure ? { 'api-key': key } : { authorization: `Bearer ${key}` };
  if (channel.type !== ProviderTypeId.Azure && channel.organization)
    credential['openai-organization'] = channel.organization;
  return { ...channel.headers, ...credential };
}

/** One call to the channel's video API; the body is left for the caller to read or pipe. */
export async function callVideoApi(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  call: {
    method: 'GET' | 'POST' | 'DELETE';
    path: string;
    query?: Record<string, string>;
    json?: unknown;
    form?: { contentType: string; stream: Readable; length: number };
    timeoutMs: number;
  },
): Promise<UpstreamAnswer> {
  const headers = videoHeadersOf(channel);
  let body: string | Readable | undefined;
  if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  } else if (call.form) {
    headers['content-type'] = call.form.contentType;
    headers['content-length'] = String(call.form.length);
    body = call.form.stream;
  }
  const search = call.query ? new URLSearchParams(call.query).toString() : '';
  const answer = await request(`${videoUrlOf(channel, call.path)}${search ? `?${search}` : ''}`, {
    dispatcher,
    method: call.method,
    headers,
    body,
    headersTimeout: call.timeoutMs,
    bodyTimeout: call.timeoutMs,
  });
  return { status: answer.statusCode, headers: answer.headers, body: answer.body };
}

/** Reads a (small) JSON answer; undefined when it is not JSON. */
export async function readJson(answer: UpstreamAnswer): Promise<unknown> {
  const text = await answer.body.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Google's Veo on the Gemini API (https://ai.google.dev/gemini-api/docs/video), channel type 60, behind the same
 * OpenAI video API clients call: `POST <base>/v1beta/models/{model}:predictLongRunning` with `x-goog-api-key`,
 * `{ instances: [{ prompt, image? }], parameters: { aspectRatio, durationSeconds, resolution } }`, answered with a
 * long-running operation `{ name }`; `GET <base>/v1beta/{name}` until `done`, then
 * `response.generateVideoResponse.generatedSamples[0].video.uri` is downloaded with the key. Pure conversions here;
 * the calls are in {@link veoSubmit}, {@link veoFetch} and {@link veoContent}.
 */
import { isRecord } from '@turnpike/core/json';
import { type Dispatcher, request } from 'undici';
import { baseUrlOf } from '../../providers/provider.ts';
import type { RelayChannel } from '../../state/channel-cache.ts';
import type { UpstreamAnswer, UpstreamVideo } from './wire.ts';

/** What a create asks of Veo (already checked by the route). */
export interface VeoJob {
  readonly model: string;
  readonly prompt: string;
  readonly seconds: number;
  readonly size: string;
  /** A `data:` URL of the first frame (`input_reference.image_url`), when the client sent one. */
  readonly imageDataUrl?: string;
}

/** The predictLongRunning body of a job: the size becomes an aspect ratio and a resolution. */
export function veoRequestOf(job: VeoJob): Record<string, unknown> {
  const [width = 0, height = 0] = job.size.split('x').map(Number);
  const instance: Record<string, unknown> = { prompt: job.prompt };
  const image = job.imageDataUrl && /^data:(image\/[\w.+-]+);base64,(.+)$/s.exec(job.imageDataUrl);
  if (image) instance.image = { mimeType: image[1], bytesBase64Encoded: image[2] };
  return {
    instances: [instance],
    parameters: {
      aspectRatio: width >= height ? '16:9' : '9:16',
      durationSeconds: job.seconds,
      resolution: Math.max(width, height) >= 1920 ? '1080p' : '720p',
    },
  };
}

/** An operation name the gateway may put in a path: `models/<model>/operations/<id>`, nothing else. */
export const isOperationName = (name: unknown): name is string =>
  typeof name === 'string' && /^models\/[\w.-]+\/operations\/[\w-]+$/.test(name);

/** A Veo operation read as an OpenAI video job; `content_uri` keeps where the finished clip is downloaded. */
export function videoOfOperation(operation: unknown): (UpstreamVideo & { content_uri?: string }) | undefined {
  if (!isRecord(operation) || !isOperationName(operation.name)) return undefined;
  const id = operation.name;
  if (isRecord(operation.error)) {
    const message =
      typeof operation.error.message === 'string' ? operation.error.message : 'the operation failed';
    return { id, status: 'failed', error: { code: String(operation.error.code ?? 'failed'), message } };
  }
  if (operation.done !== true) return { id, status: 'in_progress' };
  const response = isRecord(operation.response) ? operation.response.generateVideoResponse : undefined;
  const samples =
    isRecord(response) && Array.isArray(response.generatedSamples) ? response.generatedSamples : [];
  const first = samples[0] as { video?: { uri?: unknown } } | undefined;
  const uri = first?.video?.uri;
  if (typeof uri === 'string' && /^https?:\/\//.test(uri))
    return { id, status: 'completed', progress: 100, content_uri: uri };
  // Done without a video: the safety filters took it out; they say why.
  const reasons =
    isRecord(response) && Array.isArray(response.raiMediaFilteredReasons)
      ? response.raiMediaFilteredReasons
      : [];
  const message =
    reasons.filter((reason) => typeof reason === 'string').join('; ') || 'no video was generated';
  return { id, status: 'failed', error: { code: 'no_video', message } };
}

const headersOf = (channel: RelayChannel): Record<string, string> => ({
  ...channel.headers,
  'x-goog-api-key': channel.key ?? '',
});

/** Submits a job; a 200 with an operation name is the accepted job, queued. */
export async function veoSubmit(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  job: VeoJob,
  timeoutMs: number,
): Promise<{ status: number; text: string; video: UpstreamVideo | undefined }> {
  const answer = await request(
    `${baseUrlOf(channel)}/v1beta/models/${encodeURIComponent(job.model)}:predictLongRunning`,
    {
      dispatcher,
      method: 'POST',
      headers: { ...headersOf(channel), 'content-type': 'application/json' },
      body: JSON.stringify(veoRequestOf(job)),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    },
  );
  const text = await answer.body.text();
  let name: unknown;
  try {
    name = (JSON.parse(text) as { name?: unknown }).name;
  } catch {
    name = undefined;
  }
  const video: UpstreamVideo | undefined =
    answer.statusCode === 200 && isOperationName(name)
      ? { id: name, status: 'queued', progress: 0, seconds: job.seconds, size: job.size }
      : undefined;
  return { status: answer.statusCode, text, video };
}

/** Reads one operation; undefined when the upstream does not know it (left to the time-out). */
export async function veoFetch(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  name: string,
  timeoutMs: number,
): Promise<UpstreamVideo | undefined> {
  if (!isOperationName(name)) return undefined;
  const answer = await request(`${baseUrlOf(channel)}/v1beta/${name}`, {
    dispatcher,
    method: 'GET',
    headers: headersOf(channel),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  if (answer.statusCode !== 200) {
    await answer.body.dump();
    return undefined;
  }
  return videoOfOperation(await answer.body.json().catch(() => undefined));
}

/**
 * Downloads a finished clip. The key goes only to the channel's own origin; the file service answers with a
 * redirect to short-lived storage, which is followed once without the key.
 */
export async function veoContent(
  channel: RelayChannel,
  dispatcher: Dispatcher,
  uri: string,
  timeoutMs: number,
): Promise<UpstreamAnswer | undefined> {
  if (new URL(uri).origin !== new URL(baseUrlOf(channel)).origin) return undefined;
  const options = { dispatcher, method: 'GET' as const, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  const first = await request(uri, { ...options, headers: headersOf(channel) });
  const location = first.headers.location;
  if (first.statusCode >= 300 && first.statusCode < 400 && typeof location === 'string') {
    await first.body.dump();
    const next = await request(new URL(location, uri).toString(), options);
    return { status: next.statusCode, headers: next.headers, body: next.body };
  }
  return { status: first.statusCode, headers: first.headers, body: first.body };
}

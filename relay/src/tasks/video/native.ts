/**
 * What the converted video providers (Jimeng, Vidu, Doubao Seedance) share: one job shape, one answer shape, the
 * lengths each makes, and the download of a finished clip from its public address. Each provider's own file
 * (jimeng.ts, vidu.ts, seedance.ts) says which document it follows.
 */
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { type Dispatcher, request } from 'undici';
import type { RelayChannel } from '../../state/channel-cache.ts';
import type { UpstreamAnswer, UpstreamVideo } from './wire.ts';

/** What a create asks of a converted provider (already checked by the route). */
export interface NativeJob {
  readonly model: string;
  readonly prompt: string;
  readonly seconds: number;
  readonly size: string;
  /** The first frame: an http(s) address or a `data:` URL. */
  readonly image?: string;
}

/** A submit's answer: its status and text, and the job (under the gateway's upstream id) when it was accepted. */
export interface NativeSubmitAnswer {
  readonly status: number;
  readonly text: string;
  readonly video: UpstreamVideo | undefined;
}

/** The clip lengths a provider makes and the one it makes when none is asked. */
export interface ClipLengths {
  readonly isAllowed: (seconds: number) => boolean;
  readonly fallback: number;
  /** How the refusal of another length reads. */
  readonly says: string;
}

/**
 * Lengths of the converted types (each from its document): Kling and Jimeng 5 or 10 s, Vidu 1 to 10 s (viduq2; the
 * older models refuse what they do not make), Seedance 2 to 12 s. A create without `seconds` gets the provider's
 * default (5), not OpenAI's 4, so what is held is what is made.
 */
export function clipLengthsOf(type: number): ClipLengths | undefined {
  switch (type) {
    case ProviderTypeId.Kling:
      return {
        isAllowed: (s) => s === 5 || s === 10,
        fallback: 5,
        says: 'a Kling video is 5 or 10 seconds long',
      };
    case ProviderTypeId.Jimeng:
      return {
        isAllowed: (s) => s === 5 || s === 10,
        fallback: 5,
        says: 'a Jimeng video is 5 or 10 seconds long',
      };
    case ProviderTypeId.Vidu:
      return {
        isAllowed: (s) => s >= 1 && s <= 10,
        fallback: 5,
        says: 'a Vidu video is 1 to 10 seconds long',
      };
    case ProviderTypeId.DoubaoVideo:
      return {
        isAllowed: (s) => s >= 2 && s <= 12,
        fallback: 5,
        says: 'a Seedance video is 2 to 12 seconds long',
      };
    default:
      return undefined;
  }
}

/** An aspect ratio of the three every provider takes, from a `WIDTHxHEIGHT` size. */
export function aspectRatioOf(size: string): '16:9' | '9:16' | '1:1' {
  const [width = 0, height = 0] = size.split('x').map(Number);
  return width === height ? '1:1' : width > height ? '16:9' : '9:16';
}

/** A refusal the upstream put inside a 200 (a `code` that is not success), as an error the caller can read. */
export function refusedAnswer(message: string, code: string): NativeSubmitAnswer {
  return {
    status: 400,
    text: JSON.stringify({ error: { message, type: 'upstream_error', code } }),
    video: undefined,
  };
}

/** One JSON call; the answer's status and text. */
/** The channel's own headers, its key under `scheme` (Ark's `Bearer`, Vidu's `Token`), and JSON's type for a body. */
export const keyedHeaders = (
  channel: RelayChannel,
  scheme: string,
  json: boolean,
): Record<string, string> => ({
  ...channel.headers,
  authorization: `${scheme} ${(channel.key ?? '').trim()}`,
  ...(json ? { 'content-type': 'application/json' } : {}),
});

export async function callJson(
  dispatcher: Dispatcher,
  url: string,
  init: {
    method: 'GET' | 'POST';
    headers: Record<string, string>;
    body?: string;
    timeoutMs: number;
  },
): Promise<{ status: number; text: string }> {
  const answer = await request(url, {
    dispatcher,
    method: init.method,
    headers: init.headers,
    ...(init.body === undefined ? {} : { body: init.body }),
    headersTimeout: init.timeoutMs,
    bodyTimeout: init.timeoutMs,
  });
  return { status: answer.statusCode, text: await answer.body.text() };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Downloads a finished clip from its public address, without credentials (one redirect followed). */
export async function fetchPublicClip(
  dispatcher: Dispatcher,
  uri: string,
  timeoutMs: number,
): Promise<UpstreamAnswer> {
  const options = { dispatcher, method: 'GET' as const, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  const first = await request(uri, options);
  const location = first.headers.location;
  if (first.statusCode >= 300 && first.statusCode < 400 && typeof location === 'string') {
    await first.body.dump();
    const next = await request(new URL(location, uri).toString(), options);
    return { status: next.statusCode, headers: next.headers, body: next.body };
  }
  return { status: first.statusCode, headers: first.headers, body: first.body };
}

/** A converted provider: how a job is sent and how its state is asked. */
export interface NativeVideoApi {
  /** Whether the channel's key has the shape the provider's authentication needs. */
  readonly isUsableKey: (key: string) => boolean;
  readonly submit: (
    channel: RelayChannel,
    dispatcher: Dispatcher,
    job: NativeJob,
    timeoutMs: number,
  ) => Promise<NativeSubmitAnswer>;
  /** The job's state, or undefined when the upstream did not say (asked again next pass). */
  readonly fetch: (
    channel: RelayChannel,
    dispatcher: Dispatcher,
    id: string,
    timeoutMs: number,
  ) => Promise<UpstreamVideo | undefined>;
}

/**
 * What the batch code needs of a provider's Batch API, whichever it is: submit the lines, read the batch's state,
 * cancel it, and bring its results back as OpenAI's output lines (https://platform.openai.com/docs/guides/batch,
 * "output file"), so a client reads the same output whatever channel served it.
 */
import { type Dispatcher, request } from 'undici';
import type { NormalisedUsage } from '../contract.ts';
import type { FormatOptions } from '../formats/format.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import type { BatchEndpoint, BatchLine } from './input.ts';

/** One line of a batch's output or error file, in OpenAI's shape. */
export interface OutputLine {
  readonly id: string;
  readonly custom_id: string;
  readonly response: {
    readonly status_code: number;
    readonly request_id: string;
    readonly body: unknown;
  } | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** A batch's state upstream, in OpenAI's words. */
export interface UpstreamState {
  /** validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled. */
  readonly status: string;
  readonly completed: number;
  readonly failed: number;
  readonly errors?: unknown;
  /** Where the provider keeps the results (OpenAI's output and error file ids, Anthropic's results URL). */
  readonly outputRef?: string | undefined;
  readonly errorRef?: string | undefined;
}

export interface Submitted {
  readonly upstreamId: string;
  readonly upstreamFileId: string;
}

export interface BatchSubmit {
  readonly lines: readonly BatchLine[];
  readonly endpoint: BatchEndpoint;
  /** The model the upstream knows (the channel's mapping applied). */
  readonly upstreamModel: string;
  readonly metadata?: unknown;
  /** The options a format conversion reads (Anthropic's default max tokens, thinking adapter). */
  readonly options: FormatOptions;
}

export interface BatchApi {
  submit(channel: RelayChannel, dispatcher: Dispatcher, batch: BatchSubmit): Promise<Submitted>;
  state(channel: RelayChannel, dispatcher: Dispatcher, upstreamId: string): Promise<UpstreamState>;
  cancel(channel: RelayChannel, dispatcher: Dispatcher, upstreamId: string): Promise<void>;
  /** The output and error lines of a finished batch. */
  results(
    channel: RelayChannel,
    dispatcher: Dispatcher,
    state: UpstreamState,
    model: string,
  ): Promise<BatchResults>;
}

export interface BatchResults {
  readonly output: OutputLine[];
  readonly errors: OutputLine[];
  /**
   * The usage of each served line where the provider's own report was converted (Anthropic's): billed from it, not
   * from the OpenAI-shaped copy in the output. Absent: each line's `response.body.usage` is OpenAI's own.
   */
  readonly usage?: ReadonlyMap<string, NormalisedUsage>;
}

/** An upstream call that did not answer 2xx. */
export class UpstreamCallError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string, what: string) {
    super(`${what}: the upstream answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

export const CALL_TIMEOUT_MS = 60_000;

/** One call; the body's text, or an {@link UpstreamCallError}. */
export async function callUpstream(
  dispatcher: Dispatcher,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Buffer },
  what: string,
): Promise<string> {
  const answer = await request(url, {
    dispatcher,
    method: init.method,
    headers: init.headers,
    body: init.body,
    headersTimeout: CALL_TIMEOUT_MS,
    bodyTimeout: CALL_TIMEOUT_MS,
  });
  const text = await answer.body.text();
  if (answer.statusCode < 200 || answer.statusCode >= 300)
    throw new UpstreamCallError(answer.statusCode, text, what);
  return text;
}

/** Parses a JSON answer, `{}` when it is not an object. */
export function jsonOf(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The JSON objects of a JSON Lines text (lines that are not objects are skipped). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const value = jsonOf(raw);
    if (Object.keys(value).length > 0) out.push(value);
  }
  return out;
}

export const countOf = (value: unknown): number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;

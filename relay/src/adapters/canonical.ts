/**
 * The canonical shape every conversion goes through: OpenAI's chat completions wire format
 * (https://platform.openai.com/docs/api-reference/chat) — the request, the `chat.completion` answer and the
 * `chat.completion.chunk` stream. It is the format most clients and upstreams already speak, so the OpenAI side
 * needs no converter at all, and every other format needs two: to it and from it (docs/adr/0018).
 */
import type { NormalisedUsage } from '../metering/usage.ts';

export type Json = Record<string, unknown>;

/** A chat completions request body. */
export type ChatRequest = Json;

/** A `chat.completion.chunk`. */
export type ChatChunk = Json;

/** A `chat.completion` answer with the usage the upstream reported (undefined: none, the relay counts). */
export interface ChatAnswer {
  readonly answer: Json;
  readonly usage: NormalisedUsage | undefined;
}

export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const asString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** A finite number, or undefined. */
export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** `data:<type>;base64,<data>` split, or undefined for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1] as string, data: match[2] as string } : undefined;
}

/** JSON text of a tool call's arguments, read back as an object (a model's broken JSON becomes `{}`). */
export function parseArguments(text: unknown): Json {
  if (isRecord(text)) return text;
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** The text of chat message content: a string, or the `text` of its parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** One streamed chat chunk with one choice. */
export function chatChunk(
  id: string,
  model: string,
  created: number,
  delta: Json,
  finish: string | null = null,
) {
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A short random id suffix (`msg_…`, `call_…`): unique enough for one answer's items. */
export const randomId = (): string => Math.random().toString(36).slice(2, 14).padEnd(12, '0');

/**
 * The canonical shape every conversion goes through: OpenAI's chat completions wire format
 * (https://platform.openai.com/docs/api-reference/chat) — the request, the `chat.completion` answer and the
 * `chat.completion.chunk` stream. It is the format most clients and upstreams already speak, so the OpenAI side
 * needs no converter at all, and every other format needs two: to it and from it (docs/adr/0018).
 */

import { isRecord, type Json } from '@turnpike/core/json';
import type { ChatRequest, NormalisedUsage } from '../contract.ts';

/** A chat completions request body, and a `chat.completion.chunk` (the contract's words). */
export type { ChatChunk, ChatRequest } from '../contract.ts';
export { isRecord, type Json };

/** A `chat.completion` answer with the usage the upstream reported (undefined: none, the relay counts). */
export interface ChatAnswer {
  readonly answer: Json;
  readonly usage: NormalisedUsage | undefined;
}

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

/** A chat completion with one choice (created now); `usage` is added when the upstream reported one. */
export function chatCompletion(id: string, model: string, message: Json, finish: string, usage?: Json) {
  return {
    id,
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  };
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A short random id suffix (`msg_…`, `call_…`): unique enough for one answer's items. */
export const randomId = (): string => Math.random().toString(36).slice(2, 14).padEnd(12, '0');

/**
 * Anthropic's signed thinking, carried through the canonical shape for the ends that can give it back (an
 * extension, as LiteLLM names it): an assistant message's and a `chat.completion`'s `thinking_blocks`, and in a
 * stream a chunk delta's `thinking_blocks` once a block is whole. A Responses client keeps them in a reasoning
 * item's `encrypted_content`; OpenAI chat clients are never shown them. Only an Anthropic upstream reads them.
 */
export type ThinkingBlock =
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string };

/** The signed thinking blocks of a value (a message's `thinking_blocks`): the well-formed ones. */
export function thinkingBlocksOf(value: unknown): ThinkingBlock[] {
  if (!Array.isArray(value)) return [];
  const blocks: ThinkingBlock[] = [];
  for (const block of value) {
    if (!isRecord(block)) continue;
    if (
      block.type === 'thinking' &&
      typeof block.thinking === 'string' &&
      typeof block.signature === 'string' &&
      block.signature !== ''
    )
      blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking' && typeof block.data === 'string')
      blocks.push({ type: 'redacted_thinking', data: block.data });
  }
  return blocks;
}

/** How a Responses reasoning item's `encrypted_content` holds signed thinking the relay wrote. */
export const THINKING_CONTENT_PREFIX = 'turnpike.thinking.v1.';

export const encodeThinkingContent = (blocks: readonly ThinkingBlock[]): string =>
  THINKING_CONTENT_PREFIX + Buffer.from(JSON.stringify(blocks)).toString('base64url');

/** The signed thinking in an `encrypted_content` the relay wrote; [] for any other (OpenAI's own). */
export function decodeThinkingContent(content: unknown): ThinkingBlock[] {
  if (typeof content !== 'string' || !content.startsWith(THINKING_CONTENT_PREFIX)) return [];
  try {
    const text = Buffer.from(content.slice(THINKING_CONTENT_PREFIX.length), 'base64url').toString('utf8');
    return thinkingBlocksOf(JSON.parse(text));
  } catch {
    return [];
  }
}

/**
 * A built-in tool the client's provider runs on its side (Responses' `web_search`, `file_search`, ...), carried in
 * the canonical request's `hosted_tools` (an extension, beside `tools`) as the client declared it. A format that
 * runs an equivalent says so in `Format.hostedTools` and writes its own (Anthropic's web search server tool,
 * Gemini's `googleSearch`); for any other the relay leaves the tool out of the upstream request and says so in the
 * `x-turnpike-dropped-tools` header and the consume log (docs/adr/0029).
 */
export type HostedTool = Json & { readonly type: string };

/** The kinds of hosted tool a format can run an equivalent of. */
export type HostedToolKind = 'web_search';

/** The hosted tool kind of a client's tool type (`web_search_preview` is the older name of `web_search`). */
export const hostedKindOf = (type: string): HostedToolKind | undefined =>
  type === 'web_search' || type === 'web_search_preview' || type.startsWith('web_search_preview_')
    ? 'web_search'
    : undefined;

/** The hosted tools of a canonical request (its `hosted_tools`). */
export function hostedToolsOf(chat: Readonly<Json>): HostedTool[] {
  if (!Array.isArray(chat.hosted_tools)) return [];
  return chat.hosted_tools.filter(
    (tool): tool is HostedTool => isRecord(tool) && typeof tool.type === 'string',
  );
}

/**
 * The canonical request one attempt sends to a format that runs the hosted tools of `kinds`: the others are taken
 * out (`dropped`, their types, for the header and the log). `hosted_tools` never reaches a format that runs none.
 */
export function keepHostedTools(
  chat: ChatRequest,
  kinds: ReadonlySet<HostedToolKind> | undefined,
): { chat: ChatRequest; dropped: string[] } {
  if (chat.hosted_tools === undefined) return { chat, dropped: [] };
  const kept: HostedTool[] = [];
  const dropped: string[] = [];
  for (const tool of hostedToolsOf(chat)) {
    const kind = hostedKindOf(tool.type);
    if (kind !== undefined && kinds?.has(kind)) kept.push(tool);
    else if (!dropped.includes(tool.type)) dropped.push(tool.type);
  }
  const { hosted_tools: _all, ...rest } = chat;
  return { chat: kept.length > 0 ? { ...rest, hosted_tools: kept } : rest, dropped };
}

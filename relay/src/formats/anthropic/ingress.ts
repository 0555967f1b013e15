/**
 * Anthropic Messages clients (https://docs.anthropic.com/en/api/messages), Claude Code among them: the key in
 * `x-api-key` (or `Authorization: Bearer`, as `ANTHROPIC_AUTH_TOKEN` sends it), errors as
 * `{ type: "error", error: { type, message } }`, streams as named events (`message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `error`).
 *
 * Request (Messages → chat): `system` (a string or text blocks) becomes a system message; text, image (base64
 * and URL), `tool_use` and `tool_result` blocks become chat parts, `tool_calls` and `tool` messages; tools,
 * `tool_choice` (`any` → `required`, `disable_parallel_tool_use`), `stop_sequences`, `max_tokens`, `temperature`,
 * `top_p`, `metadata.user_id` (→ `user`, when it fits OpenAI's 64 characters) and `thinking` (its budget, or
 * adaptive thinking's `output_config.effort` → `reasoning_effort`) are mapped; a `system` message in the
 * conversation (Claude Code sends its environment so) stays a system message where it stands. Thinking asked
 * with `display: "omitted"` is not shown.
 * Answer (chat → Messages): `reasoning_content` as a thinking block, content as a text block, `tool_calls` as
 * `tool_use` blocks, `finish_reason` as `stop_reason`, the usage with the cache split out as Anthropic reports it.
 *
 * Thinking on a converted path: a thinking block written from another provider's reasoning carries an empty
 * `signature` (nothing Anthropic could verify; Anthropic's own, re-encoded for a sensitive-word check, keeps its); `thinking` and `redacted_thinking` blocks a client sends back in
 * its history are left out of the chat request (never sent on as text: their signatures mean nothing to another
 * provider). The web search server tool becomes the channel's own search (Gemini's `googleSearch`) or is left
 * out and the client told (docs/adr/0029); other server tools (code execution, ... — any tool with a `type` other
 * than `custom`) and `mcp_servers` only Anthropic runs: such a request is refused with a 400 naming them unless an
 * Anthropic channel serves the model. Citations of an Anthropic answer pass unread to an Anthropic client; on a
 * converted path an answer is text only.
 */

import type { Ingress, RelayError, StreamEncoder } from '../../contract.ts';
import { localError } from '../../errors.ts';
import { formatSseNamedJson } from '../../sse.ts';
import {
  asNumber,
  asString,
  contentText,
  isRecord,
  type Json,
  parseArguments,
  randomId,
  thinkingBlocksOf,
} from '../canonical.ts';
import { bearerKey, withRequestId } from '../ingress.ts';
import { STOP_OF_FINISH } from './chat.ts';
import { anthropicErrorType } from './errors.ts';
import { toAnthropicUsage } from './usage.ts';

const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

export function anthropicErrorBody(error: RelayError, requestId: string) {
  return {
    type: 'error',
    error: {
      // The gateway's own refusals carry OpenAI's types: their status says Anthropic's.
      type:
        !error.isLocal && ANTHROPIC_ERROR_TYPES.has(error.type)
          ? error.type
          : anthropicErrorType(error.status),
      message: withRequestId(error.message, requestId),
    },
  };
}

function imagePart(source: unknown): Json | undefined {
  if (!isRecord(source)) return undefined;
  if (source.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url' && typeof source.url === 'string')
    return { type: 'image_url', image_url: { url: source.url } };
  return undefined;
}

/** Text and image blocks as chat parts (a lone text block as a string). */
function chatContent(blocks: readonly Json[]): unknown {
  const parts: Json[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') {
      const part: Json = { type: 'text', text: block.text };
      if (isRecord(block.cache_control)) part.cache_control = block.cache_control;
      parts.push(part);
    } else if (block.type === 'image') {
      const part = imagePart(block.source);
      if (part) parts.push(part);
    }
  }
  if (parts.length === 1 && parts[0]?.type === 'text' && parts[0].cache_control === undefined)
    return parts[0].text;
  return parts;
}

const blocksOf = (content: unknown): Json[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content.filter(isRecord)
      : [];

/** `thinking.budget_tokens` as an OpenAI `reasoning_effort`. */
const effortOf = (budget: number): string => (budget <= 2048 ? 'low' : budget <= 12_000 ? 'medium' : 'high');

/** `output_config.effort` (adaptive thinking) as an OpenAI `reasoning_effort`. */
const ADAPTIVE_EFFORT: Readonly<Record<string, string>> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  max: 'high',
};

/** The `reasoning_effort` a Messages request's thinking asks for, if any. */
function reasoningEffortOf(body: Readonly<Json>): string | undefined {
  const thinking = isRecord(body.thinking) ? body.thinking : undefined;
  if (thinking?.type === 'enabled') return effortOf(asNumber(thinking.budget_tokens) ?? 0);
  if (thinking?.type !== 'adaptive') return undefined;
  const effort = isRecord(body.output_config) ? asString(body.output_config.effort) : undefined;
  return (effort && ADAPTIVE_EFFORT[effort]) ?? 'medium';
}

/** `thinking.display: "omitted"`: the client asked not to be shown the thinking text. */
const hidesThinking = (body: Readonly<Json> | undefined): boolean =>
  isRecord(body?.thinking) && body.thinking.display === 'omitted';

/** OpenAI's limit on `user`; Claude Code's `metadata.user_id` (a JSON object as text) is longer and left out. */
const MAX_USER_LENGTH = 64;

/** Blocks of a client's history no other provider can read: Anthropic-signed thinking. */
const SIGNED_BLOCKS = new Set(['thinking', 'redacted_thinking']);

/** Anthropic's web search server tool (`web_search_20250305`, and the versions after it). */
const isWebSearch = (tool: Json): boolean =>
  typeof tool.type === 'string' && tool.type.startsWith('web_search_');

/**
 * The web search server tool as a canonical hosted web search (canonical.ts `hosted_tools`), in the Responses
 * tool's terms (allowed domains as `filters`, the approximate user location), for the channel's own search.
 */
function hostedWebSearch(tool: Json): Json {
  const hosted: Json = { type: 'web_search' };
  if (Array.isArray(tool.allowed_domains) && tool.allowed_domains.length > 0)
    hosted.filters = { allowed_domains: tool.allowed_domains };
  if (isRecord(tool.user_location)) hosted.user_location = tool.user_location;
  return hosted;
}

/**
 * Why a Messages request cannot go to a channel of another format: a server tool (a tool with a `type` other than
 * `custom`) or an MCP server only Anthropic runs. A 400 naming it. The web search server tool is not a reason:
 * another channel runs its own search, or it is left out and the client told (docs/adr/0029).
 */
export function refuseMessagesConversion(body: Readonly<Json>): RelayError | undefined {
  const refuse = (message: string) => localError(400, 'unsupported_tool', message, 'invalid_request_error');
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const tool of tools) {
    if (!isRecord(tool) || tool.type === undefined || tool.type === null || tool.type === 'custom') continue;
    if (isWebSearch(tool)) continue;
    const name = typeof tool.name === 'string' ? ` (${tool.name})` : '';
    return refuse(
      `tools: the server tool ${String(tool.type)}${name} is not supported for this model: only an Anthropic channel runs it, and the model's channel is of another provider; leave the tool out or use a model an Anthropic channel serves`,
    );
  }
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0)
    return refuse(
      "mcp_servers is not supported for this model: only an Anthropic channel connects to MCP servers, and the model's channel is of another provider",
    );
  return undefined;
}

export function messagesToChatRequest(body: Readonly<Json>, model: string, isStream: boolean): Json {
  const messages: Json[] = [];
  const system = blocksOf(body.system);
  if (system.length > 0) messages.push({ role: 'system', content: chatContent(system) });
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    // Signed thinking is for Anthropic only: left out, never sent on as text.
    const blocks = blocksOf(message.content).filter((block) => !SIGNED_BLOCKS.has(String(block.type)));
    if (message.role === 'system') {
      // A system message in the conversation (Claude Code's environment notes), where it stands.
      const text = contentText(chatContent(blocks));
      if (text !== '') messages.push({ role: 'system', content: text });
      continue;
    }
    if (message.role === 'assistant') {
      const out: Json = { role: 'assistant', content: contentText(chatContent(blocks)) };
      const calls = blocks
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
        }));
      if (calls.length > 0) out.tool_calls = calls;
      messages.push(out);
      continue;
    }
    // A user turn: tool results first (answers to the previous turn's calls), then the rest.
    for (const block of blocks) {
      if (block.type !== 'tool_result') continue;
      const text = typeof block.content === 'string' ? block.content : contentText(block.content);
      messages.push({
        role: 'tool',
        tool_call_id: block.tool_use_id,
        content: block.is_error === true ? `Error: ${text}` : text,
      });
    }
    const rest = blocks.filter((block) => block.type !== 'tool_result');
    if (rest.length > 0) messages.push({ role: 'user', content: chatContent(rest) });
  }
  const chat: Json = { model, messages, stream: isStream };
  const maxTokens = asNumber(body.max_tokens);
  if (maxTokens !== undefined) chat.max_tokens = maxTokens;
  for (const field of ['temperature', 'top_p'] as const)
    if (asNumber(body[field]) !== undefined) chat[field] = body[field];
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  const search = (Array.isArray(body.tools) ? body.tools : []).filter(isRecord).find(isWebSearch);
  if (search) chat.hosted_tools = [hostedWebSearch(search)];
  const functions = (Array.isArray(body.tools) ? body.tools : []).filter(
    (tool): tool is Json => isRecord(tool) && !isWebSearch(tool),
  );
  if (functions.length > 0) {
    chat.tools = functions.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: isRecord(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} },
      },
    }));
  }
  if (isRecord(body.tool_choice)) {
    const choice = body.tool_choice;
    if (choice.type === 'any') chat.tool_choice = 'required';
    else if (choice.type === 'none') chat.tool_choice = 'none';
    else if (choice.type === 'tool' && search !== undefined && choice.name === search.name)
      chat.tool_choice = 'auto'; // the search is the channel's own, or left out: the model chooses
    else if (choice.type === 'tool') chat.tool_choice = { type: 'function', function: { name: choice.name } };
    else chat.tool_choice = 'auto';
    if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  const user = isRecord(body.metadata) ? asString(body.metadata.user_id) : undefined;
  if (user !== undefined && user.length <= MAX_USER_LENGTH) chat.user = user;
  const effort = reasoningEffortOf(body);
  if (effort !== undefined) chat.reasoning_effort = effort;
  return chat;
}

export function chatToMessagesAnswer(
  answer: Json,
  usage: Parameters<typeof toAnthropicUsage>[0],
  model: string,
  body?: Readonly<Json>,
): Json {
  const choice = Array.isArray(answer.choices) && isRecord(answer.choices[0]) ? answer.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const content: Json[] = [];
  // Anthropic's own signed thinking (a stream re-encoded for a sensitive-word check) as it came; another
  // provider's reasoning with an empty signature.
  const signed = thinkingBlocksOf(message.thinking_blocks);
  if (signed.length > 0)
    content.push(...signed.filter((block) => block.type !== 'thinking' || !hidesThinking(body)));
  else if (
    !hidesThinking(body) &&
    typeof message.reasoning_content === 'string' &&
    message.reasoning_content !== ''
  )
    content.push({ type: 'thinking', thinking: message.reasoning_content, signature: '' });
  const text = contentText(message.content);
  if (text !== '') content.push({ type: 'text', text });
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    content.push({
      type: 'tool_use',
      id: asString(call.id) ?? `toolu_${randomId()}`,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  const finish = asString(choice.finish_reason);
  return {
    id: `msg_${asString(answer.id) ?? randomId()}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: finish ? (STOP_OF_FINISH[finish] ?? 'end_turn') : 'end_turn',
    stop_sequence: null,
    usage: toAnthropicUsage(usage),
  };
}

const event = (name: string, data: Json): string => formatSseNamedJson(name, { type: name, ...data });

/** Canonical chunks as Messages stream events: blocks opened and closed as the kind of output changes. */
export function createMessagesEncoder(body: Readonly<Json>, model: string, requestId: string): StreamEncoder {
  const showsThinking = !hidesThinking(body);
  let started = false;
  let block = -1;
  let open: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use' | undefined;
  let stopReason = 'end_turn';
  /** Tool call index (chat) → content block index (Messages). */
  const toolBlocks = new Map<number, number>();
  let out = '';
  const start = (id: unknown) => {
    if (started) return;
    started = true;
    out += event('message_start', {
      message: {
        id: `msg_${typeof id === 'string' ? id : requestId}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  };
  const close = () => {
    if (open !== undefined) out += event('content_block_stop', { index: block });
    open = undefined;
  };
  const openBlock = (kind: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use', contentBlock: Json) => {
    close();
    block += 1;
    open = kind;
    out += event('content_block_start', { index: block, content_block: contentBlock });
  };
  return {
    quotaComment: false,
    chunk(chunk) {
      start(chunk.id);
      const choice =
        Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : undefined;
      const delta = choice && isRecord(choice.delta) ? choice.delta : {};
      if (showsThinking && typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
        if (open !== 'thinking') openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        out += event('content_block_delta', {
          index: block,
          delta: { type: 'thinking_delta', thinking: delta.reasoning_content },
        });
      }
      // A whole signed thinking block: the one just streamed gets its signature; redacted thinking comes whole.
      const signedBlocks = delta.thinking_blocks === undefined ? [] : thinkingBlocksOf(delta.thinking_blocks);
      for (const signed of signedBlocks) {
        if (signed.type === 'redacted_thinking') {
          openBlock('redacted_thinking', signed);
          close();
        } else if (showsThinking) {
          if (open !== 'thinking') {
            openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
            out += event('content_block_delta', {
              index: block,
              delta: { type: 'thinking_delta', thinking: signed.thinking },
            });
          }
          out += event('content_block_delta', {
            index: block,
            delta: { type: 'signature_delta', signature: signed.signature },
          });
          close();
        }
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        if (open !== 'text') openBlock('text', { type: 'text', text: '' });
        out += event('content_block_delta', {
          index: block,
          delta: { type: 'text_delta', text: delta.content },
        });
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isRecord(call)) continue;
        const index = typeof call.index === 'number' ? call.index : 0;
        const fn = isRecord(call.function) ? call.function : {};
        if (!toolBlocks.has(index)) {
          openBlock('tool_use', {
            type: 'tool_use',
            id: asString(call.id) ?? `toolu_${randomId()}`,
            name: fn.name ?? '',
            input: {},
          });
          toolBlocks.set(index, block);
        }
        if (typeof fn.arguments === 'string' && fn.arguments !== '')
          out += event('content_block_delta', {
            index: toolBlocks.get(index),
            delta: { type: 'input_json_delta', partial_json: fn.arguments },
          });
      }
      const finish = choice ? asString(choice.finish_reason) : undefined;
      if (finish) stopReason = STOP_OF_FINISH[finish] ?? 'end_turn';
      const text = out;
      out = '';
      return text;
    },
    end(usage) {
      start(undefined);
      close();
      out += event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: toAnthropicUsage(usage),
      });
      out += event('message_stop', {});
      const text = out;
      out = '';
      return text;
    },
    error: (error) => event('error', { error: anthropicErrorBody(error, requestId).error }),
    done: '',
  };
}

export const anthropicMessagesIngress: Ingress = {
  format: 'anthropic',
  keyOf: (request) => {
    const key = request.headers['x-api-key'];
    return typeof key === 'string' && key !== '' ? key : bearerKey(request.headers.authorization);
  },
  errorBody: anthropicErrorBody,
  toChat: messagesToChatRequest,
  refuseConversion: refuseMessagesConversion,
  fromChat: chatToMessagesAnswer,
  streamEncoder: createMessagesEncoder,
};

/**
 * OpenAI Responses clients (https://platform.openai.com/docs/api-reference/responses), Codex among them: the key
 * in `Authorization: Bearer`, errors in OpenAI's shape, streams as named `response.*` events. An OpenAI channel
 * gets the request as it came; for any other channel it is read as a chat request:
 * `instructions` → a system message, `input` (a string, or message items with `input_text` / `input_image` /
 * `output_text` parts, `function_call` and `function_call_output` items) → messages, function tools,
 * `tool_choice`, `max_output_tokens`, `reasoning.effort`, `temperature`, `top_p`. The chat answer becomes a
 * `response` with `reasoning`, `message` and `function_call` output items, and a stream the event sequence
 * `response.created` … `response.completed`.
 *
 * Codex's tools: a `custom` tool (freeform input, e.g. `apply_patch` with a grammar) becomes a function taking one
 * string argument `input` (its grammar told in the description), and its calls come back as `custom_tool_call`
 * items with `input`; `local_shell` becomes a function taking the exec action's fields, its calls come back as
 * `local_shell_call` items. Both go back into history (`custom_tool_call(_output)`, `local_shell_call(_output)`).
 * Anthropic's signed thinking (canonical.ts) goes to a client that asked for `reasoning.encrypted_content` in its
 * reasoning item's `encrypted_content`, and back from its history to the assistant turn after it, so thinking
 * survives Codex's tool loops on a Claude channel; an OpenAI channel never sees such an item (adapters/openai).
 * A `namespace` tool (a group of function and custom tools) is offered as one function per tool named
 * `<namespace>__<tool>` (flatToolName), and its calls come back under the tool's own name with `namespace`, as
 * OpenAI answers them. Built-in tools OpenAI runs (web search, file search, code interpreter, MCP, ...) go to the
 * canonical request's `hosted_tools`: a format with an equivalent runs it (web search on Anthropic and Gemini),
 * the others leave it out and the client is told (`x-turnpike-dropped-tools`, the log's `dropped_tools`;
 * docs/adr/0029). A `previous_response_id` the gateway stored comes here with its chain replayed as input
 * (responses-store/, docs/adr/0051); one only an OpenAI channel holds, and a `conversation`, cannot be converted:
 * such a request is refused with a 400 naming it unless an OpenAI channel serves the model (docs/adr/0018).
 */

import { createHash } from 'node:crypto';
import type { Ingress, NormalisedUsage, RelayError, StreamEncoder } from '../../contract.ts';
import { localError, toOpenAiErrorBody } from '../../errors.ts';
import { formatSseNamedJson } from '../../sse.ts';
import {
  asNumber,
  asString,
  contentText,
  decodeThinkingContent,
  encodeThinkingContent,
  isRecord,
  type Json,
  parseArguments,
  randomId,
  type ThinkingBlock,
  thinkingBlocksOf,
} from '../canonical.ts';
import { bearerKey } from '../ingress.ts';
import { asksCompaction, compactionItem, SUMMARY_REQUEST, summaryMessageOf } from './compaction.ts';

function chatParts(content: unknown): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: Json[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part.type === 'input_image') {
      const url =
        asString(part.image_url) ?? (isRecord(part.image_url) ? asString(part.image_url.url) : undefined);
      if (url) parts.push({ type: 'image_url', image_url: { url } });
    }
  }
  return parts.length === 1 && parts[0]?.type === 'text' ? parts[0].text : parts;
}

/** How a tool the client declared is offered to a chat upstream, and its calls read back. */
type ToolKind = 'function' | 'custom' | 'local_shell';

/** A tool the client declared, under the name a chat upstream calls it by. */
interface DeclaredTool {
  readonly kind: ToolKind;
  /** Its own name (within its namespace). */
  readonly name: string;
  /** The `namespace` tool it belongs to, when it does. */
  readonly namespace?: string;
}

/** The name `local_shell` calls are offered under (the tool itself has no name). */
export const LOCAL_SHELL_NAME = 'local_shell';

/** The longest tool name every chat upstream takes (OpenAI's, Anthropic's and Gemini's rules agree on 64). */
const TOOL_NAME_LIMIT = 64;

/**
 * The one function name a tool of a `namespace` tool is offered under: `<namespace>__<tool>`, with any character
 * outside `[A-Za-z0-9_-]` made `_`, starting with a letter or `_` (Gemini's rule), and cut to 64 characters with a
 * hash of the whole name at its end when longer, so two long names stay apart and the same tool always gets the
 * same name (history, tool_choice and answers all meet on it). docs/adr/0029.
 */
export function flatToolName(namespace: string, name: string): string {
  let flat = `${namespace}__${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (!/^[A-Za-z_]/.test(flat)) flat = `_${flat}`;
  if (flat.length <= TOOL_NAME_LIMIT) return flat;
  const hash = createHash('sha256').update(`${namespace}\0${name}`).digest('hex').slice(0, 8);
  return `${flat.slice(0, TOOL_NAME_LIMIT - hash.length - 1)}_${hash}`;
}

/** The name a chat upstream knows a called tool by: its flat name when it is in a namespace. */
const chatToolName = (name: unknown, namespace: unknown): unknown =>
  typeof namespace === 'string' && namespace !== '' && typeof name === 'string'
    ? flatToolName(namespace, name)
    : name;

/** The client's tools by the name a chat upstream calls them (top-level function tools are not listed). */
function toolTableOf(body: Readonly<Json>): ReadonlyMap<string, DeclaredTool> {
  const table = new Map<string, DeclaredTool>();
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool)) continue;
    if (tool.type === 'custom' && typeof tool.name === 'string')
      table.set(tool.name, { kind: 'custom', name: tool.name });
    else if (tool.type === 'local_shell')
      table.set(LOCAL_SHELL_NAME, { kind: 'local_shell', name: LOCAL_SHELL_NAME });
    else if (tool.type === 'namespace' && typeof tool.name === 'string')
      for (const inner of Array.isArray(tool.tools) ? tool.tools : []) {
        if (!isRecord(inner) || typeof inner.name !== 'string') continue;
        const kind = inner.type === 'custom' ? 'custom' : 'function';
        table.set(flatToolName(tool.name, inner.name), { kind, name: inner.name, namespace: tool.name });
      }
  }
  return table;
}

/** A `custom` tool as a chat function with one string argument; its format's grammar goes in the description. */
function customFunction(tool: Json, name: unknown = tool.name): Json {
  const format = isRecord(tool.format) ? tool.format : undefined;
  const notes = [typeof tool.description === 'string' ? tool.description : ''];
  if (format?.type === 'grammar' && typeof format.definition === 'string')
    notes.push(
      `The input must follow this ${typeof format.syntax === 'string' ? `${format.syntax} ` : ''}grammar:\n${format.definition}`,
    );
  return {
    type: 'function',
    function: {
      name,
      description: notes.filter((note) => note !== '').join('\n\n'),
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: 'The raw input of the tool, as free text.' } },
        required: ['input'],
      },
    },
  };
}

const LOCAL_SHELL_FUNCTION: Json = {
  type: 'function',
  function: {
    name: LOCAL_SHELL_NAME,
    description: 'Runs a command on the local machine and returns its output.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments.' },
        working_directory: { type: 'string' },
        timeout_ms: { type: 'integer' },
        env: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['command'],
    },
  },
};

/** A `function` tool as a chat function (named `name`: its flat name when it is in a namespace). */
const chatFunction = (tool: Json, name: unknown = tool.name): Json => ({
  type: 'function',
  function: {
    name,
    ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    parameters: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
  },
});

/** Tool types a chat upstream is offered as functions; any other is a built-in (hosted) tool. */
const FUNCTION_LIKE_TOOLS = new Set(['function', 'custom', 'local_shell', 'namespace']);

/** The text of a tool output: a string, or content parts (their text). */
const outputText = (output: unknown): string =>
  typeof output === 'string'
    ? output
    : Array.isArray(output)
      ? contentText(output)
      : JSON.stringify(output ?? '');

/**
 * Why a Responses request cannot go to a channel of another format: stored state the gateway cannot replay (a
 * chain it does not keep whole, a compaction's previous id, a conversation). A 400 in OpenAI's shape naming it.
 * (Built-in tools are not a reason: they are mapped or left out, docs/adr/0029.)
 */
export function refuseResponsesConversion(body: Readonly<Json>): RelayError | undefined {
  const refuse = (message: string, param: string) => ({
    ...localError(400, 'unsupported_parameter', message, 'invalid_request_error'),
    param,
  });
  if (typeof body.previous_response_id === 'string' && body.previous_response_id !== '')
    return refuse(
      'previous_response_id is not supported for this model here: the gateway replays a chain it keeps whole on /v1/responses, and otherwise only the OpenAI channel that holds the id can continue it; send the full input',
      'previous_response_id',
    );
  if (body.conversation !== undefined && body.conversation !== null)
    return refuse(
      "conversation is not supported for this model: the gateway stores no conversations and the model's channel is not OpenAI's; send the full input with store=false",
      'conversation',
    );
  return undefined;
}

/** A tool of a namespace, its description led by the namespace's, so the model knows the group it is in. */
function namespaced(namespace: Json, tool: Json): Json {
  const about = [namespace.description, tool.description].filter(
    (text): text is string => typeof text === 'string' && text !== '',
  );
  return about.length > 0 ? { ...tool, description: about.join('\n\n') } : tool;
}

export function responsesToChatRequest(body: Readonly<Json>, model: string, isStream: boolean): Json {
  const messages: Json[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '')
    messages.push({ role: 'system', content: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  /** Signed thinking of a reasoning item the relay wrote, for the assistant turn that follows it. */
  let pending: ThinkingBlock[] = [];
  const withThinking = (message: Json): Json => {
    if (pending.length > 0) message.thinking_blocks = pending;
    pending = [];
    return message;
  };
  const pushCall = (id: unknown, name: unknown, args: string) => {
    const call = { id, type: 'function', function: { name, arguments: args } };
    const last = messages.at(-1);
    if (last?.role === 'assistant' && Array.isArray(last.tool_calls) && pending.length === 0)
      (last.tool_calls as Json[]).push(call);
    else messages.push(withThinking({ role: 'assistant', content: '', tool_calls: [call] }));
  };
  for (const item of Array.isArray(input) ? input : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'reasoning') pending.push(...decodeThinkingContent(item.encrypted_content));
    else if (item.type === 'compaction') {
      // The relay's summary of what came before; OpenAI's own compaction is opaque here and left out.
      const summary = summaryMessageOf(item);
      if (summary) messages.push(summary);
    } else if (item.type === 'compaction_trigger') messages.push({ role: 'user', content: SUMMARY_REQUEST });
    else if (item.type === 'function_call')
      pushCall(item.call_id, chatToolName(item.name, item.namespace), asString(item.arguments) ?? '{}');
    else if (item.type === 'custom_tool_call')
      pushCall(
        item.call_id,
        chatToolName(item.name, item.namespace),
        JSON.stringify({ input: asString(item.input) ?? '' }),
      );
    else if (item.type === 'local_shell_call') {
      const { type: _exec, ...action } = isRecord(item.action) ? item.action : {};
      pushCall(item.call_id ?? item.id, LOCAL_SHELL_NAME, JSON.stringify(action));
    } else if (
      item.type === 'function_call_output' ||
      item.type === 'custom_tool_call_output' ||
      item.type === 'local_shell_call_output'
    ) {
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id ?? item.id,
        content: outputText(item.output),
      });
    } else if (item.type === 'message' || item.role !== undefined) {
      const role = item.role === 'developer' ? 'system' : (asString(item.role) ?? 'user');
      if (role === 'assistant') messages.push(withThinking({ role, content: contentText(item.content) }));
      else messages.push({ role, content: chatParts(item.content) });
    }
  }
  const chat: Json = { model, messages, stream: isStream };
  const maxTokens = asNumber(body.max_output_tokens);
  if (maxTokens !== undefined) chat.max_tokens = maxTokens;
  for (const field of ['temperature', 'top_p'] as const)
    if (asNumber(body[field]) !== undefined) chat[field] = body[field];
  if (isRecord(body.reasoning) && typeof body.reasoning.effort === 'string')
    chat.reasoning_effort = body.reasoning.effort;
  const tools: Json[] = [];
  const hosted: Json[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool) || typeof tool.type !== 'string') continue;
    if (tool.type === 'custom') tools.push(customFunction(tool));
    else if (tool.type === 'local_shell') tools.push(LOCAL_SHELL_FUNCTION);
    else if (tool.type === 'function') tools.push(chatFunction(tool));
    else if (tool.type === 'namespace' && typeof tool.name === 'string')
      for (const inner of Array.isArray(tool.tools) ? tool.tools : []) {
        if (!isRecord(inner) || typeof inner.name !== 'string') continue;
        const flat = flatToolName(tool.name, inner.name);
        const described = namespaced(tool, inner);
        tools.push(inner.type === 'custom' ? customFunction(described, flat) : chatFunction(described, flat));
      }
    else if (!FUNCTION_LIKE_TOOLS.has(tool.type)) hosted.push(tool);
  }
  if (tools.length > 0) chat.tools = tools;
  if (hosted.length > 0) chat.hosted_tools = hosted;
  const choice = body.tool_choice;
  if (choice === 'auto' || choice === 'required' || choice === 'none') chat.tool_choice = choice;
  else if (isRecord(choice) && (choice.type === 'function' || choice.type === 'custom'))
    chat.tool_choice = { type: 'function', function: { name: chatToolName(choice.name, choice.namespace) } };
  else if (isRecord(choice) && choice.type === 'local_shell')
    chat.tool_choice = { type: 'function', function: { name: LOCAL_SHELL_NAME } };
  // A choice of a built-in tool is left to the model (auto): the tool may be left out for this channel.
  // A compaction asks for a summary, not a call (tools stay declared: a history with calls needs them).
  if (asksCompaction(body)) {
    if (chat.tools !== undefined) chat.tool_choice = 'none';
    delete chat.hosted_tools;
  }
  if (body.parallel_tool_calls === false) chat.parallel_tool_calls = false;
  if (typeof body.user === 'string') chat.user = body.user;
  return chat;
}

export function toResponsesUsage(usage: NormalisedUsage): Json {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

const messageItem = (id: string, text: string): Json => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

const reasoningItem = (id: string, text: string, signed: readonly ThinkingBlock[], keep: boolean): Json => ({
  type: 'reasoning',
  id,
  summary: text === '' ? [] : [{ type: 'summary_text', text }],
  ...(keep && signed.length > 0 ? { encrypted_content: encodeThinkingContent(signed) } : {}),
});

/**
 * Whether the client asked for reasoning it can send back (`include: ["reasoning.encrypted_content"]`, as Codex
 * does with store=false): Anthropic's signed thinking then goes in the reasoning item's `encrypted_content`.
 */
const keepsReasoning = (body: Readonly<Json>): boolean =>
  Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');

/**
 * A finished tool call as the output item of the tool the client declared: `function_call` with its arguments,
 * `custom_tool_call` with the `input` string, or `local_shell_call` with an exec action.
 */
function callItem(
  table: ReadonlyMap<string, DeclaredTool>,
  callId: string,
  chatName: string,
  args: string,
  id?: string,
): Json {
  const declared = table.get(chatName);
  const kind = declared?.kind ?? 'function';
  // A tool of a namespace is called under its own name and its namespace, as OpenAI calls it.
  const name = declared?.name ?? chatName;
  const namespace = declared?.namespace !== undefined ? { namespace: declared.namespace } : {};
  if (kind === 'custom') {
    const parsed = parseArguments(args);
    const input = typeof parsed.input === 'string' ? parsed.input : args;
    return {
      type: 'custom_tool_call',
      id: id ?? `ctc_${randomId()}`,
      call_id: callId,
      name,
      ...namespace,
      input,
      status: 'completed',
    };
  }
  if (kind === 'local_shell') {
    const action = parseArguments(args);
    return {
      type: 'local_shell_call',
      id: id ?? `lsh_${randomId()}`,
      call_id: callId,
      action: {
        type: 'exec',
        command: Array.isArray(action.command) ? action.command.map(String) : [],
        env: isRecord(action.env) ? action.env : {},
        ...(asNumber(action.timeout_ms) !== undefined ? { timeout_ms: action.timeout_ms } : {}),
        ...(typeof action.working_directory === 'string'
          ? { working_directory: action.working_directory }
          : {}),
      },
      status: 'completed',
    };
  }
  return {
    type: 'function_call',
    id: id ?? `fc_${randomId()}`,
    call_id: callId,
    name,
    ...namespace,
    arguments: args,
    status: 'completed',
  };
}

function responseObject(id: string, model: string, status: string, output: Json[], usage: Json | null): Json {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output,
    usage,
  };
}

export function chatToResponse(
  answer: Json,
  usage: NormalisedUsage,
  model: string,
  body: Readonly<Json> = {},
): Json {
  const table = toolTableOf(body);
  const choice = Array.isArray(answer.choices) && isRecord(answer.choices[0]) ? answer.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const output: Json[] = [];
  const reasoning = asString(message.reasoning_content) ?? '';
  const signed = thinkingBlocksOf(message.thinking_blocks);
  if (reasoning !== '' || (signed.length > 0 && keepsReasoning(body)))
    output.push(reasoningItem(`rs_${randomId()}`, reasoning, signed, keepsReasoning(body)));
  const text = contentText(message.content);
  if (asksCompaction(body)) {
    const response = responseObject(
      `resp_${randomId()}`,
      model,
      'completed',
      [compactionItem(text.trim())],
      null,
    );
    return { ...response, usage: toResponsesUsage(usage) };
  }
  if (text !== '') output.push(messageItem(`msg_${randomId()}`, text));
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    output.push(
      callItem(
        table,
        asString(call.id) ?? `call_${randomId()}`,
        asString(call.function.name) ?? '',
        asString(call.function.arguments) ?? '{}',
      ),
    );
  }
  const status = choice.finish_reason === 'length' ? 'incomplete' : 'completed';
  return responseObject(`resp_${randomId()}`, model, status, output, toResponsesUsage(usage));
}

/** Canonical chunks as Responses events: an output item per kind of output, opened and closed in order. */
export function createResponsesEncoder(
  body: Readonly<Json>,
  model: string,
  requestId: string,
): StreamEncoder {
  const table = toolTableOf(body);
  const id = `resp_${requestId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24) || randomId()}`;
  let sequence = 0;
  let out = '';
  const emit = (type: string, data: Json) => {
    out += formatSseNamedJson(type, { type, sequence_number: sequence, ...data });
    sequence += 1;
  };
  const items: Json[] = [];
  let open:
    | {
        kind: 'text' | 'reasoning' | 'call';
        item: Json;
        text: string;
        callIndex?: number;
        /** A call's tool name as the chat upstream knows it (flat, for a tool of a namespace). */
        chatName?: string;
        signed?: ThinkingBlock[];
      }
    | undefined;
  const keep = keepsReasoning(body);
  let finish: string | undefined;
  /** The `response` object of the closing event, once written. */
  let whole: Json | undefined;
  /** A compaction's summary, gathered whole: it goes out as one `compaction` item at the end. */
  const compacting = asksCompaction(body);
  let summary = '';
  const close = () => {
    if (!open) return;
    const index = items.length;
    const { item, text } = open;
    if (open.kind === 'text') {
      emit('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text });
      const part = { type: 'output_text', text, annotations: [] };
      emit('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
      Object.assign(item, { status: 'completed', content: [part] });
    } else if (open.kind === 'reasoning') {
      Object.assign(item, reasoningItem(String(item.id), text, open.signed ?? [], keep));
    } else if (item.type === 'function_call') {
      emit('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        arguments: text,
      });
      Object.assign(item, { status: 'completed', arguments: text });
    } else {
      // A custom or local shell call: its input is known once the arguments are whole.
      const name = item.type === 'local_shell_call' ? LOCAL_SHELL_NAME : (open.chatName ?? String(item.name));
      const done = callItem(table, String(item.call_id), name, text, String(item.id));
      if (done.type === 'custom_tool_call') {
        const input = String(done.input);
        if (input !== '')
          emit('response.custom_tool_call_input.delta', {
            item_id: item.id,
            output_index: index,
            delta: input,
          });
        emit('response.custom_tool_call_input.done', { item_id: item.id, output_index: index, input });
      }
      for (const key of Object.keys(item)) delete item[key];
      Object.assign(item, done);
    }
    emit('response.output_item.done', { output_index: index, item });
    items.push(item);
    open = undefined;
  };
  const begin = (
    kind: 'text' | 'reasoning' | 'call',
    item: Json,
    call?: { index: number; chatName: string },
  ) => {
    close();
    open = {
      kind,
      item,
      text: '',
      ...(call === undefined ? {} : { callIndex: call.index, chatName: call.chatName }),
    };
    const index = items.length;
    emit('response.output_item.added', { output_index: index, item });
    if (kind === 'text')
      emit('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
  };
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    const response = responseObject(id, model, 'in_progress', [], null);
    emit('response.created', { response });
    emit('response.in_progress', { response });
  };
  const take = () => {
    const text = out;
    out = '';
    return text;
  };
  return {
    quotaComment: true,
    chunk(chunk) {
      start();
      const choice =
        Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : undefined;
      const delta = choice && isRecord(choice.delta) ? choice.delta : {};
      if (compacting) {
        if (typeof delta.content === 'string') summary += delta.content;
        if (choice && typeof choice.finish_reason === 'string') finish = choice.finish_reason;
        return take();
      }
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
        if (open?.kind !== 'reasoning')
          begin('reasoning', { type: 'reasoning', id: `rs_${randomId()}`, summary: [] });
        (open as unknown as { text: string }).text += delta.reasoning_content;
      }
      const signed =
        keep && delta.thinking_blocks !== undefined ? thinkingBlocksOf(delta.thinking_blocks) : [];
      if (signed.length > 0) {
        if (open?.kind !== 'reasoning')
          begin('reasoning', { type: 'reasoning', id: `rs_${randomId()}`, summary: [] });
        const current = open as unknown as { signed?: ThinkingBlock[] };
        current.signed = [...(current.signed ?? []), ...signed];
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        if (open?.kind !== 'text')
          begin('text', {
            type: 'message',
            id: `msg_${randomId()}`,
            status: 'in_progress',
            role: 'assistant',
            content: [],
          });
        const current = open as unknown as { item: Json; text: string };
        current.text += delta.content;
        emit('response.output_text.delta', {
          item_id: current.item.id,
          output_index: items.length,
          content_index: 0,
          delta: delta.content,
        });
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isRecord(call)) continue;
        const index = typeof call.index === 'number' ? call.index : 0;
        const fn = isRecord(call.function) ? call.function : {};
        if (open?.kind !== 'call' || open.callIndex !== index) {
          const chatName = asString(fn.name) ?? '';
          const callId = asString(call.id) ?? `call_${randomId()}`;
          const declared = table.get(chatName);
          const kind = declared?.kind;
          const name = declared?.name ?? chatName;
          const namespace = declared?.namespace !== undefined ? { namespace: declared.namespace } : {};
          begin(
            'call',
            kind === 'custom'
              ? {
                  type: 'custom_tool_call',
                  id: `ctc_${randomId()}`,
                  call_id: callId,
                  name,
                  ...namespace,
                  input: '',
                  status: 'in_progress',
                }
              : kind === 'local_shell'
                ? {
                    type: 'local_shell_call',
                    id: `lsh_${randomId()}`,
                    call_id: callId,
                    action: { type: 'exec', command: [], env: {} },
                    status: 'in_progress',
                  }
                : {
                    type: 'function_call',
                    id: `fc_${randomId()}`,
                    call_id: callId,
                    name,
                    ...namespace,
                    arguments: '',
                    status: 'in_progress',
                  },
            { index, chatName },
          );
        }
        const current = open as unknown as { item: Json; text: string };
        if (typeof fn.arguments === 'string' && fn.arguments !== '') {
          current.text += fn.arguments;
          if (current.item.type === 'function_call')
            emit('response.function_call_arguments.delta', {
              item_id: current.item.id,
              output_index: items.length,
              delta: fn.arguments,
            });
        }
      }
      if (choice && typeof choice.finish_reason === 'string') finish = choice.finish_reason;
      return take();
    },
    end(usage) {
      start();
      close();
      if (compacting) {
        const item = compactionItem(summary.trim());
        emit('response.output_item.added', { output_index: items.length, item });
        emit('response.output_item.done', { output_index: items.length, item });
        items.push(item);
      }
      const status = finish === 'length' ? 'incomplete' : 'completed';
      whole = responseObject(id, model, status, items, toResponsesUsage(usage));
      emit(`response.${status}`, { response: whole });
      return take();
    },
    answer: () => whole,
    error: (error) =>
      formatSseNamedJson('error', {
        type: 'error',
        sequence_number: sequence,
        code: error.code,
        message: error.message,
        param: null,
      }),
    done: '',
  };
}

export const openAiResponsesIngress: Ingress = {
  format: 'openai',
  keyOf: (request) => bearerKey(request.headers.authorization),
  errorBody: (error, requestId) => toOpenAiErrorBody(error, requestId),
  toChat: responsesToChatRequest,
  refuseConversion: refuseResponsesConversion,
  fromChat: chatToResponse,
  streamEncoder: createResponsesEncoder,
};

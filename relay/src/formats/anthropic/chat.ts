/**
 * Anthropic Messages (https://docs.anthropic.com/en/api/messages) to and from the canonical chat shape.
 *
 * Request (chat → Messages): system messages become `system` (their `cache_control` kept); content parts become
 * text and image blocks (a `data:` URL as base64, any other URL as a URL source); assistant `tool_calls` become
 * `tool_use` blocks and `tool` messages `tool_result` blocks of one user turn; tools, `tool_choice`
 * (`required` → `any`) and `parallel_tool_calls: false` are mapped; `stop` becomes `stop_sequences`; `max_tokens`
 * is required by Anthropic, so `claude.default_max_tokens` fills it; `temperature` is capped at 1 and `top_p` is
 * dropped when both are set (current models refuse the pair); `reasoning_effort` or a `-thinking` model suffix
 * (with `claude.thinking_adapter_enabled`) turn extended thinking on with a budget of
 * `claude.thinking_adapter_budget_tokens_percentage` of `max_tokens`, and then temperature and top_p are left out.
 *
 * Signed thinking (`thinking_blocks`, canonical.ts) leads its assistant turn; in a tool loop whose calling turn has
 * none, thinking is left off for the request (Anthropic would refuse it).
 *
 * Answer (Messages → chat): text blocks joined into `content`, thinking into `reasoning_content` (and, signed, into
 * `thinking_blocks`), `tool_use` into
 * `tool_calls`; `stop_reason` mapped to `finish_reason`; usage with cache reads and writes.
 */
import { toOpenAiUsage } from '../../metering/usage.ts';
import {
  asNumber,
  asString,
  type ChatAnswer,
  type ChatRequest,
  contentText,
  hostedKindOf,
  hostedToolsOf,
  isRecord,
  type Json,
  nowSeconds,
  parseArguments,
  parseDataUrl,
  thinkingBlocksOf,
} from '../canonical.ts';
import type { FormatOptions } from '../format.ts';
import { anthropicUsageOf } from './usage.ts';

/** The thinking budget of each `reasoning_effort`, as a share of `max_tokens` (high: the option's share). */
const EFFORT_SHARE: Readonly<Record<string, number>> = { minimal: 0.1, low: 0.25, medium: 0.5 };
const MIN_THINKING_BUDGET = 1024;

export const THINKING_SUFFIX = '-thinking';

/** `stop_reason` → `finish_reason`. */
export const FINISH_OF_STOP: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** `finish_reason` → `stop_reason`. */
export const STOP_OF_FINISH: Readonly<Record<string, string>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

function imageBlock(part: Json): Json | undefined {
  const image = part.image_url;
  const url = isRecord(image) ? asString(image.url) : asString(image);
  if (url === undefined) return undefined;
  const data = parseDataUrl(url);
  return data
    ? { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } }
    : { type: 'image', source: { type: 'url', url } };
}

/** Chat content (a string or parts) as Anthropic content blocks. */
function contentBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: Json[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    let block: Json | undefined;
    if (part.type === 'text' && typeof part.text === 'string') block = { type: 'text', text: part.text };
    else if (part.type === 'image_url') block = imageBlock(part);
    if (block === undefined) continue;
    if (isRecord(part.cache_control)) block.cache_control = part.cache_control;
    blocks.push(block);
  }
  return blocks;
}

function toolResultContent(content: unknown): unknown {
  if (typeof content === 'string') return content;
  const blocks = contentBlocks(content);
  return blocks.length > 0 ? blocks : contentText(content);
}

/** Consecutive turns of one role are merged: Anthropic alternates user and assistant. */
function pushTurn(messages: Json[], role: 'user' | 'assistant', blocks: Json[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last && last.role === role && Array.isArray(last.content)) (last.content as Json[]).push(...blocks);
  else messages.push({ role, content: blocks });
}

function toolChoiceOf(choice: unknown, parallel: unknown): Json | undefined {
  let out: Json | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') out = { type: 'none' };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string')
    out = { type: 'tool', name: choice.function.name };
  if (parallel === false) out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/** `claude.default_max_tokens` for a model (its own entry, else `default`). */
export function defaultMaxTokens(options: FormatOptions, model: string): number {
  const table = options.get('claude.default_max_tokens');
  return table[model] ?? table.default ?? 8192;
}

const THINKING_TYPES = new Set(['thinking', 'redacted_thinking']);

/**
 * Whether the conversation is in a tool loop (it ends with tool results) whose calling assistant turn does not
 * start with a thinking block: Anthropic refuses such a request while thinking is on.
 */
export function lacksLoopThinking(messages: readonly unknown[]): boolean {
  const last = messages.at(-1);
  const previous = messages.at(-2);
  if (!isRecord(last) || last.role !== 'user' || !Array.isArray(last.content)) return false;
  if (!last.content.some((block) => isRecord(block) && block.type === 'tool_result')) return false;
  if (!isRecord(previous) || previous.role !== 'assistant' || !Array.isArray(previous.content)) return false;
  const first = previous.content[0];
  return !(isRecord(first) && THINKING_TYPES.has(String(first.type)));
}

/** The canonical request as a Messages request body for `model`. */
export function chatToMessages(chat: ChatRequest, model: string, options: FormatOptions): Json {
  let upstreamModel = model;
  let thinkingShare: number | undefined;
  const budgetShare = options.get('claude.thinking_adapter_budget_tokens_percentage');
  if (model.endsWith(THINKING_SUFFIX) && options.get('claude.thinking_adapter_enabled')) {
    upstreamModel = model.slice(0, -THINKING_SUFFIX.length);
    thinkingShare = budgetShare;
  }
  const effort = asString(chat.reasoning_effort);
  if (effort !== undefined && effort !== 'none') thinkingShare = EFFORT_SHARE[effort] ?? budgetShare;

  const system: Json[] = [];
  const messages: Json[] = [];
  for (const message of Array.isArray(chat.messages) ? chat.messages : []) {
    if (!isRecord(message)) continue;
    const { role } = message;
    if (role === 'system' || role === 'developer') {
      system.push(...contentBlocks(message.content));
    } else if (role === 'tool') {
      pushTurn(messages, 'user', [
        {
          type: 'tool_result',
          tool_use_id: asString(message.tool_call_id) ?? '',
          content: toolResultContent(message.content),
        },
      ]);
    } else if (role === 'assistant') {
      // Signed thinking the client kept goes first, as Anthropic wants it.
      const blocks: Json[] = [
        ...thinkingBlocksOf(message.thinking_blocks),
        ...contentBlocks(message.content),
      ];
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        blocks.push({
          type: 'tool_use',
          id: asString(call.id) ?? '',
          name: asString(call.function.name) ?? '',
          input: parseArguments(call.function.arguments),
        });
      }
      pushTurn(messages, 'assistant', blocks);
    } else {
      pushTurn(messages, 'user', contentBlocks(message.content));
    }
  }

  const maxTokens =
    asNumber(chat.max_completion_tokens) ??
    asNumber(chat.max_tokens) ??
    defaultMaxTokens(options, upstreamModel);
  const body: Json = { model: upstreamModel, messages, max_tokens: maxTokens };
  if (system.length > 0)
    body.system = system.every((block) => block.cache_control === undefined)
      ? system.map((block) => block.text).join('\n')
      : system;
  if (chat.stream === true) body.stream = true;
  const stop = typeof chat.stop === 'string' ? [chat.stop] : Array.isArray(chat.stop) ? chat.stop : undefined;
  if (stop && stop.length > 0) body.stop_sequences = stop;
  if (Array.isArray(chat.tools) && chat.tools.length > 0) {
    body.tools = chat.tools
      .filter((tool): tool is Json => isRecord(tool) && isRecord(tool.function))
      .map((tool) => {
        const fn = tool.function as Json;
        const out: Json = {
          name: fn.name,
          input_schema: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
        };
        if (typeof fn.description === 'string') out.description = fn.description;
        if (isRecord(tool.cache_control)) out.cache_control = tool.cache_control;
        return out;
      });
    const choice = toolChoiceOf(chat.tool_choice, chat.parallel_tool_calls);
    if (choice) body.tool_choice = choice;
  }
  const search = webSearchTool(chat, body.tools);
  if (search) body.tools = [...(Array.isArray(body.tools) ? body.tools : []), search];
  if (typeof chat.user === 'string') body.metadata = { user_id: chat.user };
  // In a tool loop Anthropic wants the assistant turn that called the tools to start with its signed thinking;
  // without it (a client that did not keep it), this turn goes without thinking rather than be refused.
  if (thinkingShare !== undefined && lacksLoopThinking(messages)) thinkingShare = undefined;
  if (thinkingShare !== undefined) {
    body.thinking = {
      type: 'enabled',
      budget_tokens: Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens * thinkingShare)),
    };
    // Thinking needs room beyond its budget.
    if ((body.thinking as { budget_tokens: number }).budget_tokens >= maxTokens)
      body.max_tokens = (body.thinking as { budget_tokens: number }).budget_tokens + MIN_THINKING_BUDGET;
  } else {
    const temperature = asNumber(chat.temperature);
    if (temperature !== undefined) body.temperature = Math.min(temperature, 1);
    const topP = asNumber(chat.top_p);
    if (topP !== undefined && temperature === undefined) body.top_p = topP;
  }
  return body;
}

/** The name Anthropic's web search server tool is called by (it must be this name). */
const WEB_SEARCH_NAME = 'web_search';

/**
 * A hosted `web_search` (canonical.ts `hosted_tools`) as Anthropic's web search server tool
 * (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool): the allowed domains
 * (`filters.allowed_domains`) and the approximate user location carried over. None when the client declared a
 * function of that name too (Anthropic wants tool names unique; the client's function wins).
 */
function webSearchTool(chat: ChatRequest, tools: unknown): Json | undefined {
  const search = hostedToolsOf(chat).find((tool) => hostedKindOf(tool.type) === 'web_search');
  if (!search) return undefined;
  if (Array.isArray(tools) && tools.some((tool) => isRecord(tool) && tool.name === WEB_SEARCH_NAME))
    return undefined;
  const out: Json = { type: 'web_search_20250305', name: WEB_SEARCH_NAME };
  const filters = isRecord(search.filters) ? search.filters : {};
  if (Array.isArray(filters.allowed_domains) && filters.allowed_domains.length > 0)
    out.allowed_domains = filters.allowed_domains;
  const location = isRecord(search.user_location) ? search.user_location : undefined;
  if (location) {
    const place: Json = { type: 'approximate' };
    for (const field of ['city', 'region', 'country', 'timezone'] as const)
      if (typeof location[field] === 'string') place[field] = location[field];
    out.user_location = place;
  }
  return out;
}

/** A Messages answer as a `chat.completion`. */
export function messagesToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  let text = '';
  let reasoning = '';
  const toolCalls: Json[] = [];
  const content = Array.isArray(answer.content) ? answer.content : [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    else if (block.type === 'tool_use')
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
  }
  const message: Json = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (reasoning !== '') message.reasoning_content = reasoning;
  const signed = thinkingBlocksOf(content);
  if (signed.length > 0) message.thinking_blocks = signed;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const usage = anthropicUsageOf(answer);
  const stop = asString(answer.stop_reason);
  return {
    answer: {
      id: asString(answer.id) ?? 'msg',
      object: 'chat.completion',
      created: nowSeconds(),
      model: asString(answer.model) ?? model,
      choices: [{ index: 0, message, finish_reason: stop ? (FINISH_OF_STOP[stop] ?? 'stop') : null }],
      ...(usage ? { usage: toOpenAiUsage(usage) } : {}),
    },
    usage,
  };
}

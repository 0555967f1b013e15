/**
 * The items of stored responses in OpenAI's shapes (https://platform.openai.com/docs/api-reference/responses):
 * a request's `input` as the input items `GET /v1/responses/{id}/input_items` lists (each with an id), a stored
 * chain as the input a continuing request is replayed with, and the list's pagination.
 */
import { randomBytes } from 'node:crypto';
import { isRecord, type Json } from '../formats/canonical.ts';

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

/** An id prefix per item type, as OpenAI names its items. */
const ID_PREFIX: Readonly<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  local_shell_call: 'lsh',
  local_shell_call_output: 'lsho',
  reasoning: 'rs',
};

/** Message content as parts: a string becomes one text part (`input_text`, or `output_text` for the assistant). */
function contentParts(role: string, content: unknown): unknown {
  if (typeof content !== 'string') return content;
  return [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: content }];
}

/**
 * A request's `input` as the input items OpenAI lists for the response: a string is one user message; an item
 * without a type is a message; every item gets an id when it has none.
 */
export function inputItemsOf(input: unknown): Json[] {
  if (typeof input === 'string') {
    return [
      {
        id: newId('msg'),
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: input }],
      },
    ];
  }
  const items: Json[] = [];
  for (const raw of Array.isArray(input) ? input : []) {
    if (!isRecord(raw)) continue;
    const type = typeof raw.type === 'string' ? raw.type : 'message';
    const item: Json = { ...raw, type };
    if (type === 'message') {
      const role = typeof raw.role === 'string' ? raw.role : 'user';
      item.role = role;
      item.content = contentParts(role, raw.content);
    }
    if (typeof item.id !== 'string') item.id = newId(ID_PREFIX[type] ?? 'item');
    items.push(item);
  }
  return items;
}

/** Item types a continuing request can carry as input: what a model said or did, and what the client answered. */
const REPLAYED = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'compaction',
]);

/**
 * One item of a stored chain as input for a continuing request. Ids are left out: they name items of the store
 * that made them, which another upstream does not hold. Reasoning goes only where it can be read back (its signed
 * thinking, to a channel of another format); built-in tool calls (web search, ...) were the upstream's own work
 * and are not input.
 */
function replayItem(item: unknown, keepReasoning: boolean): Json | undefined {
  if (!isRecord(item) || typeof item.type !== 'string') return undefined;
  if (item.type === 'reasoning') {
    if (!keepReasoning || typeof item.encrypted_content !== 'string') return undefined;
  } else if (!REPLAYED.has(item.type)) return undefined;
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}

/** One stored turn of a chain: what it was sent and what it answered. */
export interface ChainTurn {
  readonly input: readonly unknown[];
  readonly output: readonly unknown[];
}

/**
 * The history a chain of stored turns (oldest first) stands for, as input items: each turn's input, then its
 * output. `keepReasoning`: for a channel of another format, which reads signed thinking back.
 */
export function replayInput(turns: readonly ChainTurn[], keepReasoning: boolean): Json[] {
  const items: Json[] = [];
  for (const turn of turns)
    for (const item of [...turn.input, ...turn.output]) {
      const replayed = replayItem(item, keepReasoning);
      if (replayed) items.push(replayed);
    }
  return items;
}

/** The query of `GET /v1/responses/{id}/input_items`. */
export interface ListQuery {
  readonly after?: string | undefined;
  readonly before?: string | undefined;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

/** The query read from the URL's parameters, or the message saying which one is wrong. */
export function readListQuery(query: Readonly<Record<string, unknown>>): ListQuery | string {
  const text = (name: string): string | undefined =>
    typeof query[name] === 'string' && query[name] !== '' ? (query[name] as string) : undefined;
  const limitText = text('limit');
  const limit = limitText === undefined ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    return 'limit must be an integer between 1 and 100';
  const order = text('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return "order must be 'asc' or 'desc'";
  return { after: text('after'), before: text('before'), limit, order };
}

/** A page of items in OpenAI's list shape: `data`, `first_id`, `last_id`, `has_more`. */
export function listPage(items: readonly Json[], query: ListQuery): Json {
  const ordered = query.order === 'asc' ? [...items] : [...items].reverse();
  let start = 0;
  let end = ordered.length;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.after);
    start = at === -1 ? ordered.length : at + 1;
  }
  if (query.before !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.before);
    end = at === -1 ? 0 : at;
  }
  const window = ordered.slice(start, Math.max(start, end));
  // `before` pages backwards: the items nearest the cursor.
  const data = query.before !== undefined ? window.slice(-query.limit) : window.slice(0, query.limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: data.length < window.length,
  };
}

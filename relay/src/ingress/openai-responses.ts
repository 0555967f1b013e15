/**
 * OpenAI Responses clients (https://platform.openai.com/docs/api-reference/responses), Codex among them: the key
 * in `Authorization: Bearer`, errors in OpenAI's shape, streams as named `response.*` events. An OpenAI channel
 * gets the request as it came; for any other channel it is read as a chat request:
 * `instructions` → a system message, `input` (a string, or message items with `input_text` / `input_image` /
 * `output_text` parts, `function_call` and `function_call_output` items) → messages, function tools,
 * `tool_choice`, `max_output_tokens`, `reasoning.effort`, `temperature`, `top_p`. The chat answer becomes a
 * `response` with `reasoning`, `message` and `function_call` output items, and a stream the event sequence
 * `response.created` … `response.completed`.
 */
import { asNumber, asString, contentText, isRecord, type Json, randomId } from '../adapters/canonical.ts';
import { toOpenAiErrorBody } from '../errors.ts';
import type { NormalisedUsage } from '../metering/usage.ts';
import { bearerKey, type Ingress, type StreamEncoder } from './ingress.ts';

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

export function responsesToChatRequest(body: Readonly<Json>, model: string, isStream: boolean): Json {
  const messages: Json[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '')
    messages.push({ role: 'system', content: body.instructions });
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  for (const item of Array.isArray(input) ? input : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments ?? '{}' },
      };
      const last = messages.at(-1);
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls))
        (last.tool_calls as Json[]).push(call);
      else messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? ''),
      });
    } else if (item.type === 'message' || item.role !== undefined) {
      const role = item.role === 'developer' ? 'system' : (asString(item.role) ?? 'user');
      messages.push({
        role,
        content: role === 'assistant' ? contentText(item.content) : chatParts(item.content),
      });
    }
  }
  const chat: Json = { model, messages, stream: isStream };
  const maxTokens = asNumber(body.max_output_tokens);
  if (maxTokens !== undefined) chat.max_tokens = maxTokens;
  for (const field of ['temperature', 'top_p'] as const)
    if (asNumber(body[field]) !== undefined) chat[field] = body[field];
  if (isRecord(body.reasoning) && typeof body.reasoning.effort === 'string')
    chat.reasoning_effort = body.reasoning.effort;
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(
    (tool): tool is Json => isRecord(tool) && tool.type === 'function',
  );
  if (tools.length > 0)
    chat.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
      },
    }));
  const choice = body.tool_choice;
  if (choice === 'auto' || choice === 'required' || choice === 'none') chat.tool_choice = choice;
  else if (isRecord(choice) && choice.type === 'function')
    chat.tool_choice = { type: 'function', function: { name: choice.name } };
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

const reasoningItem = (id: string, text: string): Json => ({
  type: 'reasoning',
  id,
  summary: [{ type: 'summary_text', text }],
});

const callItem = (id: string, callId: string, name: string, args: string): Json => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
});

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

export function chatToResponse(answer: Json, usage: NormalisedUsage, model: string): Json {
  const choice = Array.isArray(answer.choices) && isRecord(answer.choices[0]) ? answer.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const output: Json[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '')
    output.push(reasoningItem(`rs_${randomId()}`, message.reasoning_content));
  const text = contentText(message.content);
  if (text !== '') output.push(messageItem(`msg_${randomId()}`, text));
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    output.push(
      callItem(
        `fc_${randomId()}`,
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
  _body: Readonly<Json>,
  model: string,
  requestId: string,
): StreamEncoder {
  const id = `resp_${requestId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24) || randomId()}`;
  let sequence = 0;
  let out = '';
  const emit = (type: string, data: Json) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...data })}\n\n`;
    sequence += 1;
  };
  const items: Json[] = [];
  let open: { kind: 'text' | 'reasoning' | 'call'; item: Json; text: string; callIndex?: number } | undefined;
  let finish: string | undefined;
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
      Object.assign(item, { summary: [{ type: 'summary_text', text }] });
    } else {
      emit('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        arguments: text,
      });
      Object.assign(item, { status: 'completed', arguments: text });
    }
    emit('response.output_item.done', { output_index: index, item });
    items.push(item);
    open = undefined;
  };
  const begin = (kind: 'text' | 'reasoning' | 'call', item: Json, callIndex?: number) => {
    close();
    open = { kind, item, text: '', ...(callIndex === undefined ? {} : { callIndex }) };
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
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
        if (open?.kind !== 'reasoning')
          begin('reasoning', { type: 'reasoning', id: `rs_${randomId()}`, summary: [] });
        (open as unknown as { text: string }).text += delta.reasoning_content;
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
        if (open?.kind !== 'call' || open.callIndex !== index)
          begin(
            'call',
            {
              type: 'function_call',
              id: `fc_${randomId()}`,
              call_id: asString(call.id) ?? `call_${randomId()}`,
              name: asString(fn.name) ?? '',
              arguments: '',
              status: 'in_progress',
            },
            index,
          );
        const current = open as unknown as { item: Json; text: string };
        if (typeof fn.arguments === 'string' && fn.arguments !== '') {
          current.text += fn.arguments;
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
      const status = finish === 'length' ? 'incomplete' : 'completed';
      emit(`response.${status}`, {
        response: responseObject(id, model, status, items, toResponsesUsage(usage)),
      });
      return take();
    },
    error: (error) =>
      `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: sequence, code: error.code, message: error.message, param: null })}\n\n`,
    done: '',
  };
}

export const openAiResponsesIngress: Ingress = {
  format: 'openai',
  keyOf: (request) => bearerKey(request.headers.authorization),
  errorBody: (error, requestId) => toOpenAiErrorBody(error, requestId),
  toChat: responsesToChatRequest,
  fromChat: chatToResponse,
  streamEncoder: createResponsesEncoder,
};

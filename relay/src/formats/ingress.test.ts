/**
 * The client side of the seam: each client format's request read as the canonical chat request, and canonical
 * answers and streams written back in the client's shapes (Anthropic Messages, Gemini, OpenAI Responses).
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_USAGE } from '../metering/usage.ts';
import { createMessagesEncoder, messagesToChatRequest } from './anthropic/ingress.ts';
import type { Json } from './canonical.ts';
import { createGeminiEncoder, geminiToChatRequest } from './gemini/ingress.ts';
import { createResponsesEncoder, responsesToChatRequest } from './openai/responses-ingress.ts';

const usage = {
  ...EMPTY_USAGE,
  promptTokens: 120,
  completionTokens: 30,
  cachedTokens: 100,
  cacheWriteTokens: 10,
};
const chunk = (delta: Json, finish: string | null = null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const events = (text: string) =>
  text
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Json);

describe('Anthropic Messages clients', () => {
  it('read system blocks, images, tool use and tool results, stop sequences and thinking as chat', () => {
    const chat = messagesToChatRequest(
      {
        system: [{ type: 'text', text: 'Be brief.' }],
        max_tokens: 5000,
        stop_sequences: ['END'],
        thinking: { type: 'enabled', budget_tokens: 4000 },
        metadata: { user_id: 'u-1' },
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '5 C' },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      },
      'claude',
      true,
    );
    expect(chat).toMatchObject({
      model: 'claude',
      stream: true,
      max_tokens: 5000,
      stop: ['END'],
      reasoning_effort: 'medium',
      user: 'u-1',
      tool_choice: 'required',
      parallel_tool_calls: false,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        {
          role: 'assistant',
          tool_calls: [{ id: 'toolu_1', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '5 C' },
        { role: 'user', content: 'Thanks' },
      ],
    });
  });

  it('write a canonical stream as the Messages event sequence, blocks opened and closed in order', () => {
    const encoder = createMessagesEncoder({}, 'claude', 'req-1');
    let text = '';
    text += encoder.chunk(chunk({ role: 'assistant', content: '' }));
    text += encoder.chunk(chunk({ reasoning_content: 'hmm' }));
    text += encoder.chunk(chunk({ content: 'Hi' }));
    text += encoder.chunk(
      chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a"' } }] }),
    );
    text += encoder.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }));
    text += encoder.chunk(chunk({}, 'tool_calls'));
    text += encoder.end(usage, false);
    const types = events(text).map((event) => event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events(text).at(-2)).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 10,
        output_tokens: 30,
      },
    });
    expect(encoder.done).toBe('');
  });
});

describe('Gemini clients', () => {
  it('read contents, inline data, function calls and responses, and generation config as chat', () => {
    const chat = geminiToChatRequest(
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          {
            role: 'user',
            parts: [{ text: 'Look' }, { inlineData: { mimeType: 'image/jpeg', data: 'BBBB' } }],
          },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 5 } } }] },
        ],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'object' } }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
        generationConfig: {
          temperature: 0.2,
          maxOutputTokens: 64,
          stopSequences: ['X'],
          thinkingConfig: { thinkingBudget: 0 },
        },
      },
      'gemini',
      false,
    );
    expect(chat).toMatchObject({
      temperature: 0.2,
      max_tokens: 64,
      stop: ['X'],
      reasoning_effort: 'none',
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BBBB' } },
          ],
        },
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_0', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp":5}' },
      ],
    });
  });

  it('write a canonical stream as Gemini chunks, a function call whole once its arguments are', () => {
    const encoder = createGeminiEncoder({}, 'gemini', 'req-1');
    let text = encoder.chunk(chunk({ content: 'Hi' }));
    text += encoder.chunk(chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a"' } }] }));
    text += encoder.chunk(
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'),
    );
    text += encoder.end(usage, false);
    const [first, last] = events(text);
    expect(first).toMatchObject({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] } }] });
    expect(last).toMatchObject({
      candidates: [
        { content: { parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] }, finishReason: 'STOP' },
      ],
      usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30, cachedContentTokenCount: 100 },
    });
  });
});

describe('Responses clients', () => {
  it('read instructions, input items, function calls and outputs, and tools as chat', () => {
    const chat = responsesToChatRequest(
      {
        instructions: 'Be brief.',
        max_output_tokens: 99,
        reasoning: { effort: 'high' },
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'web_search' }],
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
          { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'done' },
        ],
      },
      'm',
      true,
    );
    expect(chat).toMatchObject({
      max_tokens: 99,
      reasoning_effort: 'high',
      tools: [{ type: 'function', function: { name: 'f' } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', tool_calls: [{ id: 'call_1', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'done' },
      ],
    });
    expect((chat.tools as unknown[]).length).toBe(1);
  });

  it('write a canonical stream as response.* events ending with response.completed and its usage', () => {
    const encoder = createResponsesEncoder({}, 'm', 'req-1');
    let text = encoder.chunk(chunk({ content: 'Hel' }));
    text += encoder.chunk(chunk({ content: 'lo' }, 'stop'));
    text += encoder.end(usage, false);
    const list = events(text);
    expect(list.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(list.at(-1)).toMatchObject({
      response: {
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }],
        usage: { input_tokens: 120, output_tokens: 30, input_tokens_details: { cached_tokens: 100 } },
      },
    });
  });
});

/**
 * What coding agents send that chat cannot say as such: Codex's `custom` and `local_shell` tools (offered as
 * functions, their calls read back as the items Codex expects), Claude Code's signed thinking in its history
 * (left out for another provider, never sent on as text), and what only the client's own provider can do
 * (Anthropic's and Gemini's server tools, stored responses): refused in the client's protocol, naming it. Responses'
 * built-in tools and namespace tools: agent-tools.test.ts.
 */

import { defaultOptionValue } from '@turnpike/core/options/registry';
import { describe, expect, it } from 'vitest';
import { EMPTY_USAGE } from '../metering/usage.ts';
import { openAiProvider } from '../providers/openai/provider.ts';
import { chatToMessages, lacksLoopThinking } from './anthropic/chat.ts';
import { withoutUnsignedThinking } from './anthropic/format.ts';
import {
  anthropicErrorBody,
  chatToMessagesAnswer,
  createMessagesEncoder,
  messagesToChatRequest,
  refuseMessagesConversion,
} from './anthropic/ingress.ts';
import { createAnthropicDecoder } from './anthropic/stream.ts';
import { decodeThinkingContent, type Json } from './canonical.ts';
import type { FormatOptions } from './format.ts';
import { chatToGemini, cleanSchema, needsThoughtSignatures } from './gemini/chat.ts';
import { geminiErrorBody, geminiToChatRequest, refuseGeminiConversion } from './gemini/ingress.ts';
import { createChatEncoder, openAiChatIngress } from './openai/chat-ingress.ts';
import {
  chatToResponse,
  createResponsesEncoder,
  refuseResponsesConversion,
  responsesToChatRequest,
} from './openai/responses-ingress.ts';

const PATCH_GRAMMAR = 'start: begin_patch hunk+ end_patch';
const codexTools = [
  { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Edits files.',
    format: { type: 'grammar', syntax: 'lark', definition: PATCH_GRAMMAR },
  },
  { type: 'local_shell' },
];
const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
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

describe('Codex tools on a chat upstream', () => {
  it('offers a custom tool as a function of one string input, its grammar in the description', () => {
    const chat = responsesToChatRequest(
      { tools: codexTools, tool_choice: { type: 'custom', name: 'apply_patch' }, input: 'edit' },
      'm',
      false,
    );
    const tools = chat.tools as Json[];
    expect(tools.map((tool) => (tool.function as Json).name)).toEqual([
      'shell',
      'apply_patch',
      'local_shell',
    ]);
    expect(tools[1]).toMatchObject({
      type: 'function',
      function: {
        name: 'apply_patch',
        parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
      },
    });
    const description = String((tools[1]!.function as Json).description);
    expect(description).toContain('Edits files.');
    expect(description).toContain(`lark grammar:\n${PATCH_GRAMMAR}`);
    expect((tools[2]!.function as Json).parameters).toMatchObject({ required: ['command'] });
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
  });

  it('reads custom and local shell calls and their outputs in the history as tool calls and results', () => {
    const chat = responsesToChatRequest(
      {
        tools: codexTools,
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
          { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: PATCH },
          { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Done!' },
          {
            type: 'local_shell_call',
            id: 'lsh_1',
            call_id: 'call_s',
            status: 'completed',
            action: { type: 'exec', command: ['ls', '-a'], env: {} },
          },
          { type: 'local_shell_call_output', id: 'call_s', output: '{"output":"a.txt"}' },
          { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
        ],
      },
      'm',
      false,
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_p',
            type: 'function',
            function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p', content: 'Done!' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_s',
            type: 'function',
            function: { name: 'local_shell', arguments: JSON.stringify({ command: ['ls', '-a'], env: {} }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_s', content: '{"output":"a.txt"}' },
    ]);
  });

  it('answers calls of a custom tool as custom_tool_call items with the input, and local shell as exec', () => {
    const response = chatToResponse(
      {
        choices: [
          {
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
                },
                { id: 'call_2', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } },
                {
                  id: 'call_3',
                  type: 'function',
                  function: { name: 'local_shell', arguments: '{"command":["pwd"],"timeout_ms":500}' },
                },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      EMPTY_USAGE,
      'm',
      { tools: codexTools },
    );
    expect(response.output).toMatchObject([
      { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH },
      { type: 'function_call', call_id: 'call_2', name: 'shell', arguments: '{"cmd":"ls"}' },
      {
        type: 'local_shell_call',
        call_id: 'call_3',
        action: { type: 'exec', command: ['pwd'], env: {}, timeout_ms: 500 },
      },
    ]);
    expect((response.output as Json[])[0]).not.toHaveProperty('arguments');
  });

  it('streams a custom tool call as custom_tool_call_input events and a whole item', () => {
    const encoder = createResponsesEncoder({ tools: codexTools }, 'm', 'req-1');
    const args = JSON.stringify({ input: PATCH });
    let text = encoder.chunk(
      chunk({
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: '' } },
        ],
      }),
    );
    text += encoder.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 9) } }] }));
    text += encoder.chunk(
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(9) } }] }, 'tool_calls'),
    );
    text += encoder.end(EMPTY_USAGE, false);
    const list = events(text);
    expect(list.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[2]).toMatchObject({ item: { type: 'custom_tool_call', call_id: 'call_1', input: '' } });
    expect(list[4]).toMatchObject({ input: PATCH });
    const done = { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: PATCH };
    expect(list[5]).toMatchObject({ item: done });
    expect(list[6]).toMatchObject({ response: { output: [done] } });
  });

  it('refuses stored state on a converted path, naming it, and no longer built-in tools (they are mapped or left out)', () => {
    expect(refuseResponsesConversion({ tools: codexTools, input: 'x' })).toBeUndefined();
    for (const type of ['web_search', 'file_search', 'code_interpreter', 'image_generation'])
      expect(
        refuseResponsesConversion({ tools: [codexTools[0], { type }], input: 'x' }),
        type,
      ).toBeUndefined();
    const stored = refuseResponsesConversion({ previous_response_id: 'resp_1', input: 'x' });
    expect(stored).toMatchObject({ status: 400, param: 'previous_response_id' });
    expect(stored?.message).toContain('previous_response_id is not supported');
    expect(stored?.message).toContain('send the full input');
  });
});

describe("Claude Code's thinking on a chat upstream", () => {
  it('leaves signed and redacted thinking out of the chat request, never as text', () => {
    const chat = messagesToChatRequest(
      {
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'SECRET REASONING', signature: 'EqQBCkYIBxgCKkB...' },
              { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
              { type: 'text', text: 'Let me look.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
        ],
      },
      'm',
      false,
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
    ]);
    expect(JSON.stringify(chat)).not.toContain('SECRET REASONING');
    expect(JSON.stringify(chat)).not.toContain('EmwKAhgBEgy3va3p');
  });

  it("reads Claude Code's request: a system message where it stands, adaptive thinking's effort, a long user id", () => {
    const userId = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: 's-1' });
    const chat = messagesToChatRequest(
      {
        system: [{ type: 'text', text: 'You are Claude Code.' }],
        max_tokens: 32000,
        thinking: { type: 'adaptive', display: 'omitted' },
        output_config: { effort: 'high' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        metadata: { user_id: userId },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
          { role: 'system', content: [{ type: 'text', text: '# Environment' }] },
        ],
      },
      'm',
      true,
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'You are Claude Code.' },
      { role: 'user', content: 'Say hello' },
      { role: 'system', content: '# Environment' },
    ]);
    expect(chat.reasoning_effort).toBe('high');
    expect(chat).not.toHaveProperty('user');
    expect(chat).not.toHaveProperty('context_management');
    // Thinking asked with display "omitted" is not shown.
    const answer = chatToMessagesAnswer(
      {
        choices: [
          { message: { role: 'assistant', content: 'Hi', reasoning_content: 'hmm' }, finish_reason: 'stop' },
        ],
      },
      EMPTY_USAGE,
      'm',
      { thinking: { type: 'adaptive', display: 'omitted' } },
    );
    expect(answer.content).toEqual([{ type: 'text', text: 'Hi' }]);
  });

  it('writes another provider reasoning as a thinking block with an empty signature', () => {
    const answer = chatToMessagesAnswer(
      {
        choices: [
          { message: { role: 'assistant', content: 'Hi', reasoning_content: 'hmm' }, finish_reason: 'stop' },
        ],
      },
      EMPTY_USAGE,
      'm',
    );
    expect(answer.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: '' },
      { type: 'text', text: 'Hi' },
    ]);
  });

  it('sends an Anthropic upstream the history without the unsigned thinking the relay wrote', () => {
    const signed = { type: 'thinking', thinking: 'real', signature: 'sig-real' };
    const body = {
      model: 'claude',
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'converted', signature: '' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: [signed, { type: 'text', text: 'd' }] },
        { role: 'user', content: 'e' },
      ],
    };
    const sent = withoutUnsignedThinking(body);
    expect(sent.messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
      { role: 'user', content: 'c' },
      { role: 'assistant', content: [signed, { type: 'text', text: 'd' }] },
      { role: 'user', content: 'e' },
    ]);
    // In a tool loop whose calling turn only had the relay's thinking, thinking goes off for this turn.
    const loop = withoutUnsignedThinking({
      model: 'claude',
      thinking: { type: 'adaptive' },
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'converted', signature: '' },
            { type: 'tool_use', id: 't1', name: 'w', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      ],
    });
    expect(loop).not.toHaveProperty('thinking');
    expect((loop.messages as Json[])[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't1', name: 'w', input: {} }],
    });
    // Nothing to leave out: the very same body.
    const clean = { model: 'claude', messages: [{ role: 'assistant', content: [signed] }] };
    expect(withoutUnsignedThinking(clean)).toBe(clean);
  });
});

describe("Anthropic's signed thinking through the canonical shape", () => {
  const options: FormatOptions = { get: (key) => defaultOptionValue(key) };
  const signed = { type: 'thinking', thinking: 'Think.', signature: 'sig-1' };
  const sse = (data: Json) => ({
    event: String(data.type),
    data: JSON.stringify(data),
    id: undefined,
    retry: undefined,
  });

  it('reads a streamed thinking block whole, with its signature, and redacted thinking as it comes', () => {
    const decoder = createAnthropicDecoder('m');
    const chunks = [
      {
        type: 'message_start',
        message: { id: 'msg_1', model: 'm', usage: { input_tokens: 3, output_tokens: 1 } },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Thi' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'nk.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
      { type: 'content_block_stop', index: 1 },
    ].flatMap((event) => decoder.push(sse(event)).chunks);
    const deltas = chunks.map((chunk) => ((chunk.choices as Json[])[0] as Json).delta as Json);
    expect(deltas.filter((delta) => 'thinking_blocks' in delta)).toEqual([
      { thinking_blocks: [signed] },
      { thinking_blocks: [{ type: 'redacted_thinking', data: 'opaque' }] },
    ]);
    expect(deltas.map((delta) => delta.reasoning_content ?? '').join('')).toBe('Think.');
  });

  it('puts kept thinking first in its assistant turn, and leaves thinking off in a tool loop without it', () => {
    const loop = (thinkingBlocks?: Json[]) => ({
      model: 'claude',
      max_tokens: 4000,
      reasoning_effort: 'low',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          ...(thinkingBlocks ? { thinking_blocks: thinkingBlocks } : {}),
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: 'Sunny' },
      ],
    });
    const kept = chatToMessages(loop([signed]), 'claude', options);
    expect((kept.messages as Json[])[1]).toEqual({
      role: 'assistant',
      content: [signed, { type: 'tool_use', id: 't1', name: 'w', input: {} }],
    });
    expect(kept.thinking).toMatchObject({ type: 'enabled' });
    const lost = chatToMessages(loop(), 'claude', options);
    expect(lost).not.toHaveProperty('thinking');
    expect(lacksLoopThinking(lost.messages as Json[])).toBe(true);
  });

  it('keeps it for a Responses client in encrypted_content, and reads it back from the history', async () => {
    const answer = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            reasoning_content: 'Think.',
            thinking_blocks: [signed],
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const asked = chatToResponse(answer, EMPTY_USAGE, 'm', { include: ['reasoning.encrypted_content'] });
    const reasoning = (asked.output as Json[])[0] as Json;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Think.' }],
    });
    expect(decodeThinkingContent(reasoning.encrypted_content)).toEqual([signed]);
    const notAsked = chatToResponse(answer, EMPTY_USAGE, 'm', {});
    expect((notAsked.output as Json[])[0]).not.toHaveProperty('encrypted_content');

    const chat = responsesToChatRequest(
      {
        input: [
          { role: 'user', content: 'Weather?' },
          ...(asked.output as Json[]),
          { type: 'function_call_output', call_id: 't1', output: 'Sunny' },
        ],
      },
      'm',
      false,
    );
    expect((chat.messages as Json[])[1]).toMatchObject({ role: 'assistant', thinking_blocks: [signed] });

    // An OpenAI channel never gets the relay's reasoning items; OpenAI's own pass.
    const call = await openAiProvider.buildRequest(
      {
        id: 1,
        other: '',
        type: 1,
        key: 'k',
        baseUrl: 'http://u',
        headers: {},
        organization: undefined,
        paramOverride: undefined,
      },
      {
        endpoint: 'responses',
        payload: {
          kind: 'json',
          body: {
            input: [
              reasoning,
              { type: 'reasoning', id: 'rs_o', encrypted_content: 'gAAAA' },
              { role: 'user', content: 'x' },
            ],
          },
        },
        upstreamModel: 'gpt',
        isStream: false,
        options,
      },
    );
    expect(JSON.parse(call.body as string).input).toEqual([
      { type: 'reasoning', id: 'rs_o', encrypted_content: 'gAAAA' },
      { role: 'user', content: 'x' },
    ]);
  });

  it('streams it to a Responses client in the reasoning item, to an Anthropic client as its signature', () => {
    const responses = createResponsesEncoder({ include: ['reasoning.encrypted_content'] }, 'm', 'r1');
    let text = responses.chunk(chunk({ reasoning_content: 'Think.' }));
    text += responses.chunk(chunk({ thinking_blocks: [signed] }));
    text += responses.chunk(chunk({ content: 'Hi' }, 'stop'));
    text += responses.end(EMPTY_USAGE, false);
    const done = events(text).find((event) => event.type === 'response.output_item.done') as Json;
    expect(decodeThinkingContent((done.item as Json).encrypted_content)).toEqual([signed]);

    const messages = createMessagesEncoder({}, 'm', 'r1');
    let sent = messages.chunk(chunk({ reasoning_content: 'Think.' }));
    sent += messages.chunk(chunk({ thinking_blocks: [signed] }));
    sent += messages.chunk(chunk({ content: 'Hi' }, 'stop'));
    sent += messages.end(EMPTY_USAGE, false);
    const list = events(sent);
    expect(list.find((event) => (event.delta as Json | undefined)?.type === 'signature_delta')).toMatchObject(
      {
        index: 0,
        delta: { signature: 'sig-1' },
      },
    );
    expect(list.filter((event) => event.type === 'content_block_start').map((event) => event.index)).toEqual([
      0, 1,
    ]);
  });

  it('never shows it to an OpenAI chat client', () => {
    const encoder = createChatEncoder({}, 'm', 'r1');
    expect(encoder.chunk(chunk({ thinking_blocks: [signed] }))).toBe('');
    expect(encoder.chunk(chunk({ content: 'Hi', thinking_blocks: [signed] }))).not.toContain('sig-1');
    const answer = openAiChatIngress.fromChat(
      { choices: [{ message: { role: 'assistant', content: 'Hi', thinking_blocks: [signed] } }] },
      EMPTY_USAGE,
      'm',
    );
    expect(JSON.stringify(answer)).not.toContain('sig-1');
  });
});

describe("what only the client's own provider runs", () => {
  it('refuses Anthropic server tools but web search, and MCP servers, in Anthropic shape, naming the tool', () => {
    const client = { name: 'get_weather', input_schema: { type: 'object' } };
    expect(refuseMessagesConversion({ tools: [client, { type: 'custom', ...client }] })).toBeUndefined();
    const search = {
      type: 'web_search_20250305',
      name: 'web_search',
      max_uses: 3,
      allowed_domains: ['a.org'],
    };
    expect(refuseMessagesConversion({ tools: [client, search] })).toBeUndefined();
    // Web search is the channel's own (docs/adr/0029): carried as a hosted tool, never offered as a function.
    const chat = messagesToChatRequest(
      {
        tools: [client, search],
        tool_choice: { type: 'tool', name: 'web_search' },
        messages: [{ role: 'user', content: 'news?' }],
      },
      'm',
      false,
    );
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ]);
    expect(chat.hosted_tools).toEqual([{ type: 'web_search', filters: { allowed_domains: ['a.org'] } }]);
    expect(chat.tool_choice).toBe('auto');
    const refusal = refuseMessagesConversion({
      tools: [client, { type: 'code_execution_20250522', name: 'code_execution' }],
    });
    expect(refusal?.status).toBe(400);
    expect(refusal?.message).toContain('code_execution_20250522 (code_execution)');
    expect(anthropicErrorBody(refusal!, 'r1')).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    expect(
      refuseMessagesConversion({ mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] })?.message,
    ).toContain('mcp_servers');
  });

  it("spells schema types each side's way: Gemini's OBJECT as JSON schema's object and back", () => {
    const chat = geminiToChatRequest(
      {
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'f',
                parameters: {
                  type: 'OBJECT',
                  properties: { type: { type: 'STRING' }, n: { type: 'INTEGER' } },
                },
              },
            ],
          },
        ],
      },
      'm',
      false,
    );
    const parameters = { type: 'object', properties: { type: { type: 'string' }, n: { type: 'integer' } } };
    expect((chat.tools as Json[])[0]).toMatchObject({ function: { name: 'f', parameters } });
    expect(
      cleanSchema({
        ...parameters,
        additionalProperties: false,
        properties: { ...parameters.properties, o: { type: ['string', 'null'] } },
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: { type: { type: 'STRING' }, n: { type: 'INTEGER' }, o: { type: 'STRING', nullable: true } },
    });
  });

  it("keeps to the fields of Gemini's Schema, and never drops a property for its name", () => {
    expect(
      cleanSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        additionalProperties: false,
        properties: {
          strict: { type: 'boolean' },
          additionalProperties: { type: 'string', const: 'x' },
          timeout: { type: 'number', exclusiveMinimum: 0, maximum: 600000 },
          mode: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        },
        required: ['strict'],
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        strict: { type: 'BOOLEAN' },
        additionalProperties: { type: 'STRING', enum: ['x'] },
        timeout: { type: 'NUMBER', maximum: 600000 },
        mode: { anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] },
      },
      required: ['strict'],
    });
  });

  it("gives Gemini 3's function calls in the history the documented stand-in signature, and only them", () => {
    const chat = {
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
            { id: 'b', type: 'function', function: { name: 'w', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'b', content: 'Rainy' },
      ],
    };
    const options: FormatOptions = { get: (key) => defaultOptionValue(key) };
    const modelTurn = (model: string) =>
      ((chatToGemini(chat, model, options).body.contents as Json[])[1] as Json).parts as Json[];
    expect(modelTurn('gemini-3-pro-preview')).toEqual([
      {
        functionCall: { name: 'w', args: { city: 'Paris' } },
        thoughtSignature: 'skip_thought_signature_validator',
      },
      { functionCall: { name: 'w', args: { city: 'Rome' } } },
    ]);
    expect(modelTurn('gemini-2.5-flash')[0]).not.toHaveProperty('thoughtSignature');
    expect(needsThoughtSignatures('models/gemini-3.1-flash')).toBe(true);
    expect(needsThoughtSignatures('gemma-3')).toBe(false);
  });

  it('refuses code execution and URL context in Gemini shape, naming the tool, and carries Google Search', () => {
    expect(refuseGeminiConversion({ tools: [{ functionDeclarations: [{ name: 'f' }] }] })).toBeUndefined();
    for (const tool of ['googleSearch', 'googleSearchRetrieval', 'google_search']) {
      const body = { contents: [{ role: 'user', parts: [{ text: 'x' }] }], tools: [{ [tool]: {} }] };
      expect(refuseGeminiConversion(body), tool).toBeUndefined();
      const chat = geminiToChatRequest(body, 'm', false);
      expect(chat.hosted_tools, tool).toEqual([{ type: 'web_search' }]);
      expect(chat, tool).not.toHaveProperty('tools');
    }
    for (const tool of ['codeExecution', 'urlContext']) {
      const refusal = refuseGeminiConversion({ tools: [{ [tool]: {} }] });
      expect(refusal?.message, tool).toContain(`built-in tool ${tool}`);
      expect(geminiErrorBody(refusal!, 'r1'), tool).toMatchObject({
        error: { code: 400, status: 'INVALID_ARGUMENT' },
      });
    }
  });
});

/**
 * What current Codex sends on every turn and a chat upstream has no word for (docs/adr/0029): `namespace` tools
 * (groups of functions), offered flat as `<namespace>__<tool>` and called back under their own name and namespace;
 * and hosted tools (`web_search`), run as the channel's own equivalent where it has one (Anthropic's web search
 * server tool, Gemini's `googleSearch`) and otherwise left out of the upstream request.
 */

import { defaultOptionValue } from '@turnpike/core/options/registry';
import { describe, expect, it } from 'vitest';
import { EMPTY_USAGE } from '../metering/usage.ts';
import { bedrockClaudeProvider } from '../providers/bedrock/provider.ts';
import { chatToMessages } from './anthropic/chat.ts';
import { anthropicFormat } from './anthropic/format.ts';
import { createAnthropicDecoder } from './anthropic/stream.ts';
import { type Json, keepHostedTools } from './canonical.ts';
import type { FormatOptions } from './format.ts';
import { chatToGemini } from './gemini/chat.ts';
import { geminiFormat } from './gemini/format.ts';
import { openAiFormat } from './openai/format.ts';
import {
  chatToResponse,
  createResponsesEncoder,
  flatToolName,
  responsesToChatRequest,
} from './openai/responses-ingress.ts';

const options: FormatOptions = { get: (key) => defaultOptionValue(key) };

/** Codex 0.171's tools, as it sends them: functions, a namespace of functions, and the hosted web search. */
const codexTools = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Tools for spawning and managing sub-agents.',
    tools: [
      {
        type: 'function',
        name: 'close_agent',
        description: 'Close an agent.',
        parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
      },
      { type: 'custom', name: 'note', description: 'A free-text note.' },
    ],
  },
  { type: 'web_search', external_web_access: false },
];

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

describe('namespace tools on a chat upstream', () => {
  it('offers each tool of a namespace as one function named <namespace>__<tool>, the namespace told', () => {
    const chat = responsesToChatRequest({ tools: codexTools, input: 'hi' }, 'm', true);
    const tools = chat.tools as Json[];
    expect(tools.map((tool) => (tool.function as Json).name)).toEqual([
      'exec_command',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__note',
    ]);
    expect(tools[1]).toMatchObject({
      type: 'function',
      function: { parameters: { properties: { target: { type: 'string' } }, required: ['target'] } },
    });
    expect((tools[1]!.function as Json).description).toBe(
      'Tools for spawning and managing sub-agents.\n\nClose an agent.',
    );
    // A custom tool in a namespace takes one string input, as a top-level one does.
    expect(tools[2]).toMatchObject({ function: { parameters: { required: ['input'] } } });
    expect(JSON.stringify(tools)).not.toContain('"namespace"');
  });

  it('keeps every flat name within the tool-name rules of OpenAI, Anthropic and Gemini, and stable', () => {
    const rule = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
    expect(flatToolName('crm', 'find')).toBe('crm__find');
    expect(flatToolName('mcp.server/x', 'read file')).toBe('mcp_server_x__read_file');
    expect(flatToolName('1st', 'go')).toBe('_1st__go');
    const long = flatToolName('n'.repeat(40), 't'.repeat(40));
    const other = flatToolName('n'.repeat(40), `${'t'.repeat(39)}u`);
    for (const name of [long, other, flatToolName('1st', 'go')]) expect(name).toMatch(rule);
    expect(long).toHaveLength(64);
    expect(long).not.toBe(other);
    expect(flatToolName('n'.repeat(40), 't'.repeat(40))).toBe(long);
  });

  it('reads namespaced calls in the history and a namespaced tool_choice under the flat name', () => {
    const chat = responsesToChatRequest(
      {
        tools: codexTools,
        tool_choice: { type: 'function', name: 'close_agent', namespace: 'multi_agent_v1' },
        input: [
          { type: 'message', role: 'user', content: 'close it' },
          {
            type: 'function_call',
            call_id: 'call_1',
            name: 'close_agent',
            namespace: 'multi_agent_v1',
            arguments: '{"target":"a1"}',
          },
          { type: 'function_call_output', call_id: 'call_1', output: 'closed' },
          {
            type: 'custom_tool_call',
            call_id: 'call_2',
            name: 'note',
            namespace: 'multi_agent_v1',
            input: 'x',
          },
          { type: 'custom_tool_call_output', call_id: 'call_2', output: 'noted' },
        ],
      },
      'm',
      false,
    );
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'multi_agent_v1__close_agent' } });
    expect(chat.messages).toMatchObject([
      { role: 'user' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', function: { name: 'multi_agent_v1__close_agent' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'closed' },
      {
        role: 'assistant',
        tool_calls: [
          { id: 'call_2', function: { name: 'multi_agent_v1__note', arguments: '{"input":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: 'noted' },
    ]);
  });

  it('answers a call of a flat name as the item of the tool, under its own name and namespace', () => {
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
                  function: { name: 'multi_agent_v1__close_agent', arguments: '{"target":"a1"}' },
                },
                {
                  id: 'call_2',
                  type: 'function',
                  function: { name: 'multi_agent_v1__note', arguments: '{"input":"remember"}' },
                },
                { id: 'call_3', type: 'function', function: { name: 'exec_command', arguments: '{}' } },
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
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'close_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"target":"a1"}',
      },
      {
        type: 'custom_tool_call',
        call_id: 'call_2',
        name: 'note',
        namespace: 'multi_agent_v1',
        input: 'remember',
      },
      { type: 'function_call', call_id: 'call_3', name: 'exec_command' },
    ]);
    expect((response.output as Json[])[2]).not.toHaveProperty('namespace');
  });

  it('streams a namespaced call with its own name and namespace from the first event to the last', () => {
    const encoder = createResponsesEncoder({ tools: codexTools }, 'm', 'req1');
    const call = { index: 0, id: 'call_1', type: 'function' };
    const text =
      encoder.chunk(
        chunk({
          tool_calls: [{ ...call, function: { name: 'multi_agent_v1__close_agent', arguments: '' } }],
        }),
      ) +
      encoder.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"target":"a1"}' } }] })) +
      encoder.chunk(chunk({}, 'tool_calls')) +
      encoder.end(EMPTY_USAGE, true);
    const list = events(text);
    const named = {
      type: 'function_call',
      call_id: 'call_1',
      name: 'close_agent',
      namespace: 'multi_agent_v1',
    };
    expect(list.find((event) => event.type === 'response.output_item.added')).toMatchObject({ item: named });
    expect(list.find((event) => event.type === 'response.output_item.done')).toMatchObject({
      item: { ...named, arguments: '{"target":"a1"}' },
    });
    expect(list.at(-1)).toMatchObject({ type: 'response.completed', response: { output: [named] } });
  });
});

describe('hosted tools on a chat upstream', () => {
  const chat = responsesToChatRequest(
    {
      tools: [
        ...codexTools,
        {
          type: 'web_search_preview',
          filters: { allowed_domains: ['example.com'] },
          user_location: { type: 'approximate', country: 'GB', city: 'London' },
        },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
      ],
      tool_choice: { type: 'web_search' },
      input: 'news?',
    },
    'm',
    false,
  );

  it('carries them beside the functions, never among them, and leaves a choice of one to the model', () => {
    expect((chat.tools as Json[]).every((tool) => tool.type === 'function')).toBe(true);
    expect((chat.hosted_tools as Json[]).map((tool) => tool.type)).toEqual([
      'web_search',
      'web_search_preview',
      'file_search',
    ]);
    expect(chat).not.toHaveProperty('tool_choice');
  });

  it('keeps web search for Anthropic and Gemini and names what each format leaves out', () => {
    expect(anthropicFormat.hostedTools?.has('web_search')).toBe(true);
    expect(geminiFormat.hostedTools?.has('web_search')).toBe(true);
    const anthropic = keepHostedTools(chat, anthropicFormat.hostedTools);
    expect(anthropic.dropped).toEqual(['file_search']);
    expect((anthropic.chat.hosted_tools as Json[]).map((tool) => tool.type)).toEqual([
      'web_search',
      'web_search_preview',
    ]);
    // An OpenAI-compatible chat upstream runs none: it never sees the field.
    const openai = keepHostedTools(chat, openAiFormat.hostedTools);
    expect(openai.dropped).toEqual(['web_search', 'web_search_preview', 'file_search']);
    expect(openai.chat).not.toHaveProperty('hosted_tools');
    expect(openai.chat.tools).toEqual(chat.tools);
    // Claude on Bedrock speaks Anthropic's format but runs no web search: its provider narrows the format.
    expect(keepHostedTools(chat, bedrockClaudeProvider.format.hostedTools).dropped).toEqual([
      'web_search',
      'web_search_preview',
      'file_search',
    ]);
    // A request without hosted tools is the same object.
    const plain = { model: 'm', messages: [] };
    expect(keepHostedTools(plain, undefined)).toEqual({ chat: plain, dropped: [] });
  });

  it("writes web search as Anthropic's web search server tool, once, after the functions", () => {
    const { chat: kept } = keepHostedTools(chat, anthropicFormat.hostedTools);
    const body = chatToMessages(kept, 'claude-test', options);
    const tools = body.tools as Json[];
    expect(tools.slice(0, 3).map((tool) => tool.name)).toEqual([
      'exec_command',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__note',
    ]);
    expect(tools[3]).toEqual({ type: 'web_search_20250305', name: 'web_search' });
    expect(tools).toHaveLength(4);
    expect(JSON.stringify(body)).not.toContain('hosted_tools');
    // The allowed domains and the user's place carry over.
    const preview = chatToMessages(
      { ...kept, hosted_tools: (kept.hosted_tools as Json[]).slice(1) },
      'claude-test',
      options,
    );
    expect((preview.tools as Json[]).at(-1)).toEqual({
      type: 'web_search_20250305',
      name: 'web_search',
      allowed_domains: ['example.com'],
      user_location: { type: 'approximate', country: 'GB', city: 'London' },
    });
    // Without functions the server tool is the only tool.
    const alone = chatToMessages(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], hosted_tools: [{ type: 'web_search' }] },
      'claude-test',
      options,
    );
    expect(alone.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    // A client function called web_search keeps the name: the server tool stays out rather than clash.
    const clash = chatToMessages(
      {
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'web_search', parameters: { type: 'object' } } }],
        hosted_tools: [{ type: 'web_search' }],
      },
      'claude-test',
      options,
    );
    expect(clash.tools).toEqual([{ name: 'web_search', input_schema: { type: 'object' } }]);
  });

  it("writes web search as Gemini's googleSearch tool beside the function declarations", () => {
    const { chat: kept } = keepHostedTools(chat, geminiFormat.hostedTools);
    const { body } = chatToGemini(kept, 'gemini-test', options);
    const tools = body.tools as Json[];
    expect(tools).toHaveLength(2);
    expect((tools[0]!.functionDeclarations as Json[]).map((fn) => fn.name)).toEqual([
      'exec_command',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__note',
    ]);
    expect(tools[1]).toEqual({ googleSearch: {} });
    const alone = chatToGemini(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], hosted_tools: [{ type: 'web_search' }] },
      'gemini-test',
      options,
    );
    expect(alone.body.tools).toEqual([{ googleSearch: {} }]);
  });

  it("reads an Anthropic stream that searched: the server tool's query is not a call for the client", () => {
    const decoder = createAnthropicDecoder('claude-test');
    const push = (data: Json) =>
      decoder.push({ event: String(data.type), data: JSON.stringify(data), id: undefined, retry: undefined });
    push({
      type: 'message_start',
      message: { id: 'msg_1', model: 'claude-test', usage: { input_tokens: 5 } },
    });
    const started = push({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
    });
    const query = push({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"query":"news"}' },
    });
    push({ type: 'content_block_stop', index: 0 });
    push({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
    });
    const text = push({
      type: 'content_block_delta',
      index: 2,
      delta: { type: 'text_delta', text: 'Today…' },
    });
    expect(started.chunks).toEqual([]);
    expect(query.chunks).toEqual([]);
    expect(text.chunks).toMatchObject([{ choices: [{ delta: { content: 'Today…' } }] }]);
  });
});

describe("Codex's remote compaction (a compaction_trigger turn) on a chat upstream", () => {
  const body = {
    tools: codexTools,
    input: [
      { type: 'message', role: 'user', content: 'Fix parser.ts.' },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'parser.ts' },
      { type: 'compaction_trigger' },
    ],
    stream: true,
  };

  it('asks the model for a summary, tools declared but not callable, no search', () => {
    const chat = responsesToChatRequest(body, 'm', true);
    expect((chat.messages as Json[]).at(-1)).toMatchObject({ role: 'user' });
    expect(String((chat.messages as Json[]).at(-1)?.content)).toContain('handoff summary');
    expect(chat.tool_choice).toBe('none');
    expect(chat.tools).toBeDefined();
    expect(chat).not.toHaveProperty('hosted_tools');
  });

  it('answers one compaction item holding the summary, in JSON and in a stream, and reads it back later', () => {
    const answer = chatToResponse(
      { choices: [{ message: { role: 'assistant', content: ' The goal is X. ' }, finish_reason: 'stop' }] },
      EMPTY_USAGE,
      'm',
      body,
    );
    const output = answer.output as Json[];
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: 'compaction', encrypted_content: expect.any(String) });

    const encoder = createResponsesEncoder(body, 'm', 'req1');
    const text =
      encoder.chunk(chunk({ role: 'assistant', content: ' The goal' })) +
      encoder.chunk(chunk({ content: ' is X. ' })) +
      encoder.chunk(chunk({}, 'stop')) +
      encoder.end(EMPTY_USAGE, true);
    const list = events(text);
    expect(list.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    const streamed = list.at(-1)?.response as { output: Json[] };
    expect(streamed.output).toHaveLength(1);
    expect(streamed.output[0]).toMatchObject({ type: 'compaction' });

    // The next turn starts with the item: any channel reads the summary back; OpenAI's own items are left out.
    for (const item of [output[0], streamed.output[0]]) {
      const next = responsesToChatRequest(
        {
          input: [
            item,
            { type: 'compaction', encrypted_content: 'gAAAA-openai-opaque' },
            { type: 'message', role: 'user', content: 'Go on.' },
          ],
        },
        'm',
        false,
      );
      expect(next.messages).toEqual([
        {
          role: 'user',
          content: 'Summary of the conversation so far (compacted by the gateway):\n\nThe goal is X.',
        },
        { role: 'user', content: 'Go on.' },
      ]);
    }
    // OpenAI gets the summary as a user message, never the relay's item.
    const written = openAiFormat.writeRequest(
      {
        id: 1,
        type: 1,
        key: 'k',
        baseUrl: '',
        other: '',
        headers: {},
        organization: '',
        paramOverride: null,
        forceFormat: false,
        thinkingToContent: false,
      } as never,
      {
        endpoint: 'responses',
        payload: { kind: 'json', body: { input: [output[0], { role: 'user', content: 'Go on.' }] } },
        upstreamModel: 'gpt',
        isStream: false,
        options,
      },
    );
    const sent = (written.body as { json: Json }).json.input as Json[];
    expect(sent[0]).toEqual({
      type: 'message',
      role: 'user',
      content: [
        {
          type: 'input_text',
          text: 'Summary of the conversation so far (compacted by the gateway):\n\nThe goal is X.',
        },
      ],
    });
    expect(JSON.stringify(sent)).not.toContain('turnpike.compaction');
  });
});

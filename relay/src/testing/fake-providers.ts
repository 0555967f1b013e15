/**
 * A fake Anthropic, Gemini and OpenAI-compatible chat upstream for tests, speaking their real wire formats:
 * Anthropic Messages (https://docs.anthropic.com/en/api/messages: `POST /v1/messages`, JSON or the SSE event
 * sequence message_start … message_stop with pings, thinking, tool-input JSON deltas, an `error` event;
 * `POST /v1/messages/count_tokens`; `GET /v1/models`) and Gemini (https://ai.google.dev/api:
 * `POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`,
 * `:embedContent`, `:batchEmbedContents`; `GET /v1beta/models`) and OpenAI chat completions with tool calls
 * (https://platform.openai.com/docs/api-reference/chat: `POST /v1/chat/completions`, JSON or `chat.completion.chunk`
 * events with `tool_calls` deltas and a usage chunk when asked).
 *
 * It answers with a reply text, a call of the request's first tool when the request offers tools and did not yet
 * answer one, thinking when asked; usage as each provider reports it (cache reads and writes, thought tokens).
 * Faults: an HTTP error in the provider's shape, an error event after the 200, a dropped connection mid-stream,
 * a stream without usage. Every request is recorded.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isRecord } from '@turnpike/core/json';

export interface FakeProviderBehaviour {
  readonly reply: string;
  readonly thinking: string;
  /** Anthropic `cache_read_input_tokens` / Gemini `cachedContentTokenCount`. */
  readonly cacheReadTokens: number;
  /** Anthropic `cache_creation_input_tokens`. */
  readonly cacheWriteTokens: number;
  /**
   * An Anthropic `usage` object to report as it is instead of the counted one (a documented or recorded answer's,
   * e.g. with `cache_creation` by duration); a stream's `message_delta` then reports its `output_tokens` and, as
   * Anthropic's cumulative counts do, its `server_tool_use` (which `message_start` reports as none yet).
   */
  readonly anthropicUsage: Readonly<Record<string, unknown>> | undefined;
  /** A Gemini `usageMetadata` to report as it is instead of the counted one. */
  readonly geminiUsage: Readonly<Record<string, unknown>> | undefined;
  /**
   * A Gemini answer grounded with Google Search: this `groundingMetadata` on the last candidate
   * (https://ai.google.dev/gemini-api/docs/google-search), of a stream's last chunk.
   */
  readonly geminiGrounding: Readonly<Record<string, unknown>> | undefined;
  /** The Gemini API's `x-gemini-service-tier` response header (https://ai.google.dev/gemini-api/docs/priority-inference). */
  readonly geminiServiceTier: string | undefined;
  /** Answer with this HTTP status and the provider's error body. */
  readonly errorStatus: number | undefined;
  readonly errorMessage: string;
  /** In a stream: send an error event after this many text deltas. */
  readonly errorEventAfter: number | undefined;
  /** In a stream: cut the connection after this many text deltas. */
  readonly dropAfter: number | undefined;
  /** Report no usage at all. */
  readonly omitUsage: boolean;
  /** When set, requests must carry this key. */
  readonly apiKey: string | undefined;
  /** The tool to call (when the request offers it) and its arguments; default: the first tool, `{city:"Paris"}`. */
  readonly toolCall: { readonly name: string; readonly args: Record<string, unknown> } | undefined;
  /** Call a tool at most this many times (counted from the last setBehaviour), then only answer. */
  readonly toolCallLimit: number | undefined;
}

export const DEFAULT_PROVIDER_BEHAVIOUR: FakeProviderBehaviour = {
  reply: 'Hello from the fake provider.',
  thinking: 'Let me think.',
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  anthropicUsage: undefined,
  geminiUsage: undefined,
  geminiGrounding: undefined,
  geminiServiceTier: undefined,
  errorStatus: undefined,
  errorMessage: 'Overloaded',
  errorEventAfter: undefined,
  dropAfter: undefined,
  omitUsage: false,
  apiKey: undefined,
  toolCall: undefined,
  toolCallLimit: undefined,
};

export interface ProviderRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface FakeProviders {
  readonly url: string;
  readonly requests: ProviderRequest[];
  setBehaviour(change: Partial<FakeProviderBehaviour>): void;
  close(): Promise<void>;
}

/** Prompt tokens the fake reports: one per 4 characters of the request body. */
const promptTokensOf = (raw: string): number => Math.max(1, Math.ceil(raw.length / 4));
const wordsOf = (text: string): string[] => text.match(/\s*\S+/g) ?? [];

/** Names of the tools a request offers (Anthropic, OpenAI chat, Gemini). */
function toolNames(body: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool)) continue;
    // A server tool (Anthropic's web search) is run by the provider, never called back to the client.
    if (typeof tool.type === 'string' && tool.type !== 'custom' && tool.type !== 'function') continue;
    if (typeof tool.name === 'string') names.push(tool.name);
    else if (isRecord(tool.function) && typeof tool.function.name === 'string')
      names.push(tool.function.name);
    for (const declaration of Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [])
      if (isRecord(declaration) && typeof declaration.name === 'string') names.push(declaration.name);
  }
  return names;
}

/**
 * The tool to call and its arguments: the behaviour's when the request offers it, else the first tool with
 * `{city:"Paris"}`; none once the conversation holds an answer to a call.
 */
function toolToCall(
  body: Record<string, unknown>,
  wanted: FakeProviderBehaviour['toolCall'],
): { name: string; args: Record<string, unknown> } | undefined {
  if (answersACall(body)) return undefined;
  const names = toolNames(body);
  if (wanted) return names.includes(wanted.name) ? { name: wanted.name, args: wanted.args } : undefined;
  return names[0] === undefined ? undefined : { name: names[0], args: TOOL_ARGS };
}

const TOOL_ARGS = { city: 'Paris' };

/**
 * Whether the conversation holds an answer to a tool call: a chat `tool` message, an Anthropic `tool_result` block
 * or a Gemini `functionResponse` part (read from the structure: an agent's system prompt may name them in text).
 */
function answersACall(body: Record<string, unknown>): boolean {
  const turns = [
    ...(Array.isArray(body.messages) ? body.messages : []),
    ...(Array.isArray(body.contents) ? body.contents : []),
  ].filter(isRecord);
  return turns.some(
    (turn) =>
      turn.role === 'tool' ||
      (Array.isArray(turn.content) &&
        turn.content.some((block) => isRecord(block) && block.type === 'tool_result')) ||
      (Array.isArray(turn.parts) &&
        turn.parts.some((part) => isRecord(part) && isRecord(part.functionResponse))),
  );
}

/** The fields of Gemini's `Schema` (https://ai.google.dev/api/caching#Schema). */
const GEMINI_SCHEMA_FIELDS = new Set([
  'anyOf',
  'default',
  'description',
  'enum',
  'example',
  'format',
  'items',
  'maxItems',
  'maxLength',
  'maxProperties',
  'maximum',
  'minItems',
  'minLength',
  'minProperties',
  'minimum',
  'nullable',
  'pattern',
  'properties',
  'propertyOrdering',
  'required',
  'title',
  'type',
]);

/** The first field name of a function's `parameters` that Gemini's `Schema` does not know, if any. */
function unknownSchemaField(body: Record<string, unknown>): string | undefined {
  const visit = (schema: unknown): string | undefined => {
    if (!isRecord(schema)) return undefined;
    for (const [key, value] of Object.entries(schema)) {
      if (!GEMINI_SCHEMA_FIELDS.has(key)) return key;
      const nested =
        key === 'properties' && isRecord(value)
          ? Object.values(value)
              .map(visit)
              .find((found) => found !== undefined)
          : key === 'items'
            ? visit(value)
            : key === 'anyOf' && Array.isArray(value)
              ? value.map(visit).find((found) => found !== undefined)
              : undefined;
      if (nested !== undefined) return nested;
    }
    return undefined;
  };
  for (const tool of Array.isArray(body.tools) ? body.tools : [])
    for (const declaration of isRecord(tool) && Array.isArray(tool.functionDeclarations)
      ? tool.functionDeclarations
      : []) {
      const found = isRecord(declaration) ? visit(declaration.parameters) : undefined;
      if (found !== undefined) return found;
    }
  return undefined;
}

export async function startFakeProviders(
  initial: Partial<FakeProviderBehaviour> = {},
): Promise<FakeProviders> {
  let behaviour: FakeProviderBehaviour = { ...DEFAULT_PROVIDER_BEHAVIOUR, ...initial };
  let toolCalls = 0;
  /** The tool this request is answered with a call of, within the behaviour's limit. */
  const pickTool = (body: Record<string, unknown>, b: FakeProviderBehaviour) => {
    if (b.toolCallLimit !== undefined && toolCalls >= b.toolCallLimit) return undefined;
    const tool = toolToCall(body, b.toolCall);
    if (tool) toolCalls += 1;
    return tool;
  };
  const requests: ProviderRequest[] = [];
  const sockets = new Set<Socket>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const sse = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const cut = async (req: IncomingMessage, res: ServerResponse) => {
    await new Promise<void>((resolve) => res.write('', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    req.socket.destroy();
  };

  async function anthropic(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Record<string, unknown>,
    raw: string,
  ) {
    const b = behaviour;
    if (b.apiKey !== undefined && req.headers['x-api-key'] !== b.apiKey)
      return json(res, 401, {
        type: 'error',
        error: {
          type: 'authentication_error',
          message: `invalid x-api-key ${String(req.headers['x-api-key'])}`,
        },
      });
    if (b.errorStatus !== undefined)
      return json(res, b.errorStatus, {
        type: 'error',
        error: {
          type:
            b.errorStatus === 529
              ? 'overloaded_error'
              : b.errorStatus === 429
                ? 'rate_limit_error'
                : 'api_error',
          message: b.errorMessage,
        },
      });
    const input = promptTokensOf(raw);
    if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: input });
    const tool = pickTool(body, b);
    const thinks = isRecord(body.thinking) && body.thinking.type === 'enabled';
    const output = wordsOf(b.reply).length + (thinks ? wordsOf(b.thinking).length : 0) + (tool ? 12 : 0);
    const usage = b.anthropicUsage ?? {
      input_tokens: input,
      cache_creation_input_tokens: b.cacheWriteTokens,
      cache_read_input_tokens: b.cacheReadTokens,
      output_tokens: output,
    };
    const model = String(body.model);
    if (body.stream !== true) {
      const content: unknown[] = [];
      if (thinks) content.push({ type: 'thinking', thinking: b.thinking, signature: 'sig' });
      content.push({ type: 'text', text: b.reply });
      if (tool) content.push({ type: 'tool_use', id: 'toolu_fake_1', name: tool.name, input: tool.args });
      return json(res, 200, {
        id: 'msg_fake_1',
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: tool ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        ...(b.omitUsage ? {} : { usage }),
      });
    }
    sse(res);
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const serverTools = isRecord(usage.server_tool_use) ? usage.server_tool_use : undefined;
    send('message_start', {
      message: {
        id: 'msg_fake_1',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        ...(b.omitUsage
          ? {}
          : {
              usage: {
                ...usage,
                output_tokens: 1,
                ...(serverTools ? { server_tool_use: { web_search_requests: 0 } } : {}),
              },
            }),
      },
    });
    let index = 0;
    if (thinks) {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } });
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: b.thinking } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig' } });
      send('content_block_stop', { index });
      index += 1;
    }
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    send('ping', {});
    let sent = 0;
    for (const word of wordsOf(b.reply)) {
      if (b.errorEventAfter !== undefined && sent >= b.errorEventAfter) {
        send('error', { error: { type: 'overloaded_error', message: b.errorMessage } });
        res.end();
        return;
      }
      if (b.dropAfter !== undefined && sent >= b.dropAfter) return cut(req, res);
      send('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
      sent += 1;
    }
    send('content_block_stop', { index });
    if (tool) {
      index += 1;
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: 'toolu_fake_1', name: tool.name, input: {} },
      });
      const args = JSON.stringify(tool.args);
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: args.slice(0, 5) },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: args.slice(5) },
      });
      send('content_block_stop', { index });
    }
    send('message_delta', {
      delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
      ...(b.omitUsage
        ? {}
        : {
            usage: {
              output_tokens: usage.output_tokens,
              ...(serverTools ? { server_tool_use: serverTools } : {}),
            },
          }),
    });
    send('message_stop', {});
    res.end();
  }

  async function gemini(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Record<string, unknown>,
    raw: string,
  ) {
    const b = behaviour;
    const key = req.headers['x-goog-api-key'] ?? new URL(req.url ?? '/', 'http://x').searchParams.get('key');
    if (b.apiKey !== undefined && key !== b.apiKey)
      return json(res, 400, {
        error: { code: 400, message: `API key not valid: ${String(key)}`, status: 'INVALID_ARGUMENT' },
      });
    if (b.errorStatus !== undefined)
      return json(res, b.errorStatus, {
        error: {
          code: b.errorStatus,
          message: b.errorMessage,
          status: b.errorStatus === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE',
        },
      });
    const match = /^\/v1beta\/models\/([^:]+):(\w+)/.exec(path);
    const model = match?.[1] ?? 'unknown';
    const action = match?.[2] ?? '';
    const input = promptTokensOf(raw);
    if (action === 'countTokens') return json(res, 200, { totalTokens: input });
    if (action === 'embedContent') return json(res, 200, { embedding: { values: [0.1, 0.2, 0.3] } });
    if (action === 'batchEmbedContents') {
      const count = Array.isArray(body.requests) ? body.requests.length : 1;
      return json(res, 200, {
        embeddings: Array.from({ length: count }, () => ({ values: [0.1, 0.2, 0.3] })),
      });
    }
    // Like the API, a field name its Schema does not know in a function's parameters is refused.
    const unknown = unknownSchemaField(body);
    if (unknown !== undefined)
      return json(res, 400, {
        error: {
          code: 400,
          message: `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`,
          status: 'INVALID_ARGUMENT',
        },
      });
    const tool = pickTool(body, b);
    const config = isRecord(body.generationConfig) ? body.generationConfig : {};
    const thinks = isRecord(config.thinkingConfig) && config.thinkingConfig.includeThoughts === true;
    const candidates = wordsOf(b.reply).length + (tool ? 6 : 0);
    const thoughts = thinks ? wordsOf(b.thinking).length : 0;
    const usage = b.geminiUsage ?? {
      promptTokenCount: input,
      candidatesTokenCount: candidates,
      totalTokenCount: input + candidates + thoughts,
      ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
      ...(b.cacheReadTokens > 0 ? { cachedContentTokenCount: Math.min(b.cacheReadTokens, input) } : {}),
    };
    const callPart = tool ? [{ functionCall: { name: tool.name, args: tool.args } }] : [];
    const frame = (parts: unknown[], finish?: string, withUsage = false) => ({
      candidates: [
        {
          content: { role: 'model', parts },
          index: 0,
          ...(finish ? { finishReason: finish } : {}),
          ...(finish && b.geminiGrounding ? { groundingMetadata: b.geminiGrounding } : {}),
        },
      ],
      ...(withUsage && !b.omitUsage ? { usageMetadata: usage } : {}),
      modelVersion: model,
      responseId: 'fake-response',
    });
    if (b.geminiServiceTier !== undefined) res.setHeader('x-gemini-service-tier', b.geminiServiceTier);
    if (action === 'generateContent') {
      const parts: unknown[] = [];
      if (thinks) parts.push({ text: b.thinking, thought: true });
      parts.push({ text: b.reply }, ...callPart);
      return json(res, 200, frame(parts, 'STOP', true));
    }
    if (action !== 'streamGenerateContent')
      return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    sse(res);
    const send = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\r\n\r\n`);
    if (thinks) send(frame([{ text: b.thinking, thought: true }]));
    const words = wordsOf(b.reply);
    let sent = 0;
    for (const [at, word] of words.entries()) {
      if (b.errorEventAfter !== undefined && sent >= b.errorEventAfter) {
        send({ error: { code: 503, message: b.errorMessage, status: 'UNAVAILABLE' } });
        res.end();
        return;
      }
      if (b.dropAfter !== undefined && sent >= b.dropAfter) return cut(req, res);
      const last = at === words.length - 1;
      send(frame(last ? [{ text: word }, ...callPart] : [{ text: word }], last ? 'STOP' : undefined, last));
      sent += 1;
    }
    res.end();
  }

  /** OpenAI chat completions: reasoning when asked (`reasoning_effort`), the reply, a tool call when offered. */
  function openAiChat(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, raw: string) {
    const b = behaviour;
    if (b.apiKey !== undefined && req.headers.authorization !== `Bearer ${b.apiKey}`)
      return json(res, 401, {
        error: {
          message: 'Incorrect API key provided',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
    if (b.errorStatus !== undefined)
      return json(res, b.errorStatus, {
        error: { message: b.errorMessage, type: 'server_error', param: null, code: null },
      });
    const model = String(body.model);
    const tool = pickTool(body, b);
    const thinks = typeof body.reasoning_effort === 'string' && body.reasoning_effort !== 'none';
    const prompt = promptTokensOf(raw);
    const completion = wordsOf(b.reply).length + (tool ? 12 : 0) + (thinks ? wordsOf(b.thinking).length : 0);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    const finish = tool ? 'tool_calls' : 'stop';
    const call = tool && {
      id: 'call_fake_1',
      type: 'function',
      function: { name: tool.name, arguments: JSON.stringify(tool.args) },
    };
    const base = { id: 'chatcmpl-fake', created: 1_700_000_000, model };
    if (body.stream !== true)
      return json(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: b.reply,
              ...(thinks ? { reasoning_content: b.thinking } : {}),
              ...(call ? { tool_calls: [call] } : {}),
            },
            finish_reason: finish,
          },
        ],
        ...(b.omitUsage ? {} : { usage }),
      });
    sse(res);
    const send = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
      );
    send({ role: 'assistant', content: '' });
    if (thinks) send({ reasoning_content: b.thinking });
    for (const word of wordsOf(b.reply)) send({ content: word });
    if (call) {
      const args = call.function.arguments;
      send({ tool_calls: [{ index: 0, ...call, function: { name: call.function.name, arguments: '' } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 7) } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: args.slice(7) } }] });
    }
    send({}, finish);
    const options = isRecord(body.stream_options) ? body.stream_options : {};
    if (options.include_usage === true && !b.omitUsage)
      res.write(
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`,
      );
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = raw === '' ? {} : JSON.parse(raw);
        if (isRecord(parsed)) body = parsed;
      } catch {
        body = {};
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      const handled =
        req.method === 'GET' &&
        path === '/v1/models' &&
        (!req.headers['x-api-key'] || !req.headers['anthropic-version'])
          ? json(res, 401, {
              type: 'error',
              error: {
                type: 'authentication_error',
                message: 'x-api-key and anthropic-version are required',
              },
            })
          : req.method === 'GET' && path === '/v1/models'
            ? json(res, 200, {
                data: [
                  {
                    type: 'model',
                    id: 'claude-test',
                    display_name: 'Claude',
                    created_at: '2025-01-01T00:00:00Z',
                  },
                ],
                has_more: false,
              })
            : req.method === 'GET' && path === '/v1beta/models'
              ? json(res, 200, {
                  models: [{ name: 'models/gemini-test', supportedGenerationMethods: ['generateContent'] }],
                })
              : req.method === 'POST' && path === '/v1/chat/completions'
                ? openAiChat(req, res, body, raw)
                : path.startsWith('/v1/messages')
                  ? anthropic(req, res, path, body, raw)
                  : path.startsWith('/v1beta/')
                    ? gemini(req, res, path, body, raw)
                    : json(res, 404, { error: 'not found' });
      void Promise.resolve(handled).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setBehaviour(change) {
      behaviour = { ...behaviour, ...change };
      toolCalls = 0;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

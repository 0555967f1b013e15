/**
 * A fake OpenAI upstream for tests and `make bench`, speaking the real wire format of
 * https://platform.openai.com/docs/api-reference/chat (chat completions, streaming chunks), /embeddings and
 * /models, and of /completions, /moderations, /responses (events included), /images/generations and /edits,
 * /audio/speech, /transcriptions and /translations, plus the Jina/Cohere `/rerank`. It is plain node:http so it
 * costs the benchmark as little CPU as possible.
 *
 * Behaviour is set at start and can be changed between requests with {@link FakeOpenAi.setBehaviour}; every
 * request is recorded (method, path, headers, body) so tests can assert what the relay sent upstream.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countChatPromptTokens,
  countInputTokens,
  countTextTokens,
  encodingForModel,
} from '../metering/tokens.ts';

export type FakeError = 401 | 429 | 500;

export interface FakeBehaviour {
  /** The assistant's reply; streamed one word (with its leading space) per chunk. */
  readonly reply: string;
  /** Wait before the response head (ms). */
  readonly headersDelayMs: number;
  /** Wait before the first content chunk of a stream (ms), after the role chunk. */
  readonly firstTokenDelayMs: number;
  /** Wait between content chunks (ms). */
  readonly chunkDelayMs: number;
  /** Answer with this error instead of a completion. */
  readonly error: FakeError | undefined;
  /** Answer with `error` only for this many requests, then succeed (retry tests); undefined = always. */
  readonly errorTimes: number | undefined;
  /** Never report usage (neither in the body nor in a usage chunk), like some OpenAI-compatible providers. */
  readonly omitUsage: boolean;
  /** Report cached prompt tokens (`prompt_tokens_details.cached_tokens`) of this many tokens. */
  readonly cachedTokens: number;
  /**
   * Chat usage of an audio model (`gpt-4o-audio-preview`): this many audio input tokens on top of the text prompt
   * and audio output tokens on top of the text reply, reported in `*_tokens_details.audio_tokens` and included in
   * `prompt_tokens` / `completion_tokens` as OpenAI counts them.
   */
  readonly audioInputTokens: number;
  readonly audioOutputTokens: number;
  /** Close the connection after this many content chunks without finishing the stream. */
  readonly dropAfterChunks: number | undefined;
  /** Answer 200 with no content at all (an "empty reply"). */
  readonly emptyReply: boolean;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get 401. */
  readonly apiKey: string | undefined;
  /** Embedding dimensions. */
  readonly embeddingDimensions: number;
  /** Keep a chat stream's body open this long after `data: [DONE]` before ending it (ms). */
  readonly endDelayMs: number;
  /** Stop sending (keep the connection open, silent) after this many content chunks of a stream. */
  readonly stallAfterChunks: number | undefined;
  /** How a transcription reports usage: `{type:"duration"}` (whisper-1), `{type:"tokens"}`, or not at all. */
  readonly transcriptionUsage: 'duration' | 'tokens' | 'none';
  /** Length of the "audio" a transcription says it heard, in seconds. */
  readonly audioSeconds: number;
  /** Rerank answer style: Jina (`usage.total_tokens`) or Cohere (`meta.billed_units`, no tokens). */
  readonly rerankStyle: 'jina' | 'cohere';
  /** Chat reasoning sent apart from the reply (`reasoning_content`), streamed one word per chunk before it. */
  readonly reasoning: string;
  /**
   * Chat answers in a loose "compatible" shape, as some hosts send them: no `object`, choices without `index`
   * and `finish_reason` while streaming, and a vendor field of their own (`x_vendor`).
   */
  readonly looseShape: boolean;
  /**
   * A Responses request that offers a function of this name and holds no `function_call_output` yet is answered
   * with a call of it (a `function_call` item, streamed as argument deltas): an agent's tool round trip.
   */
  readonly responsesToolCall: { readonly name: string; readonly args: Record<string, unknown> } | undefined;
  /** The `service_tier` chat and Responses answers report (https://platform.openai.com/docs/api-reference). */
  readonly serviceTier: string;
  /** Chat and Responses usage of these counts instead of the counted ones (a priced test's fixed figures). */
  readonly fixedUsage: { readonly promptTokens: number; readonly completionTokens: number } | undefined;
  /** Responses answers run this many web searches: `web_search_call` output items before the message. */
  readonly webSearchCalls: number;
}

export const DEFAULT_FAKE_BEHAVIOUR: FakeBehaviour = {
  reply: 'Hello! This is a reply from the fake OpenAI upstream.',
  headersDelayMs: 0,
  firstTokenDelayMs: 0,
  chunkDelayMs: 0,
  error: undefined,
  errorTimes: undefined,
  omitUsage: false,
  cachedTokens: 0,
  audioInputTokens: 0,
  audioOutputTokens: 0,
  dropAfterChunks: undefined,
  emptyReply: false,
  apiKey: undefined,
  embeddingDimensions: 8,
  endDelayMs: 0,
  stallAfterChunks: undefined,
  transcriptionUsage: 'duration',
  audioSeconds: 9,
  rerankStyle: 'jina',
  reasoning: '',
  looseShape: false,
  responsesToolCall: undefined,
  serviceTier: 'default',
  fixedUsage: undefined,
  webSearchCalls: 0,
};

/** The `function_call` item answering a Responses request (FakeBehaviour.responsesToolCall), or undefined. */
function responsesCallOf(
  body: Record<string, unknown>,
  wanted: FakeBehaviour['responsesToolCall'],
  sequence: number,
) {
  if (!wanted) return undefined;
  const isItem = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null;
  const offered = (Array.isArray(body.tools) ? body.tools : []).some(
    (tool) => isItem(tool) && tool.type === 'function' && tool.name === wanted.name,
  );
  const answered = (Array.isArray(body.input) ? body.input : []).some(
    (item) => isItem(item) && item.type === 'function_call_output',
  );
  if (!offered || answered) return undefined;
  return {
    type: 'function_call',
    id: `fc_fake${sequence}`,
    call_id: `call_fake${sequence}`,
    name: wanted.name,
    arguments: JSON.stringify(wanted.args),
    status: 'completed',
  };
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
  /** The body's bytes as received (multipart uploads are compared byte for byte). */
  readonly rawBody: Buffer;
}

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>` (append `/v1/...`). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests whose client went away before the answer ended (an aborted stream). */
  readonly abortedCount: number;
  /** TCP connections accepted (to check keep-alive reuse). */
  readonly connectionCount: number;
  setBehaviour(change: Partial<FakeBehaviour>): void;
  /** Stops recording requests (long benchmark runs). */
  setRecording(on: boolean): void;
  close(): Promise<void>;
}

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-3.5-turbo', 'text-embedding-3-small', 'o3-mini'];

/** The error bodies OpenAI sends for these statuses. */
export function fakeErrorBody(status: FakeError): Record<string, unknown> {
  switch (status) {
    case 401:
      return {
        error: {
          message:
            'Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      };
    case 429:
      return {
        error: {
          message: 'Rate limit reached for requests. Please try again in 20ms.',
          type: 'requests',
          param: null,
          code: 'rate_limit_exceeded',
        },
      };
    case 500:
      return {
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        },
      };
  }
}

/** Splits a reply into stream pieces: one word each, the space kept in front as OpenAI's tokens do. */
const wordsOf = (text: string): string[] => text.match(/\s*\S+/g) ?? [];

/**
 * A chat stream of a length the request asks for, not the behaviour's: the body member
 * `fake_stream: { chunks, interval_ms }` (the bench's soak asks for streams of minutes this way; the relay passes
 * the member on to its upstream as it passes any it does not know). The reply's words are repeated for `chunks`
 * content chunks, one every `interval_ms` (default: the behaviour's `chunkDelayMs`).
 */
export interface FakeStreamLength {
  readonly chunks: number;
  readonly intervalMs: number | undefined;
}

/** The largest `fake_stream` the fake accepts: a day of chunks a second, and an interval of a minute. */
const MAX_FAKE_CHUNKS = 86_400;
const MAX_FAKE_INTERVAL_MS = 60_000;

const isWholeIn = (value: unknown, min: number, max: number): value is number =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/** The `fake_stream` member of a request: undefined when absent, `invalid` when it is not one the fake accepts. */
export function fakeStreamLengthOf(body: Record<string, unknown>): FakeStreamLength | 'invalid' | undefined {
  const asked = body.fake_stream;
  if (asked === undefined) return undefined;
  if (typeof asked !== 'object' || asked === null) return 'invalid';
  const { chunks, interval_ms: intervalMs } = asked as Record<string, unknown>;
  if (!isWholeIn(chunks, 1, MAX_FAKE_CHUNKS)) return 'invalid';
  if (intervalMs !== undefined && !isWholeIn(intervalMs, 0, MAX_FAKE_INTERVAL_MS)) return 'invalid';
  return { chunks, intervalMs };
}

/** `count` words of `text`, its words repeated from the start as often as needed. */
function repeatedWords(text: string, count: number): string[] {
  const words = wordsOf(text);
  if (words.length === 0) return [];
  return Array.from({ length: count }, (_, index) => {
    const word = words[index % words.length] as string;
    // A repeat starts a new sentence after the last word: it keeps a space in front.
    return index >= words.length && index % words.length === 0 ? ` ${word.trimStart()}` : word;
  });
}

/** The text fields of a multipart/form-data body (file parts skipped), enough for the fake's answers. */
export function formFields(raw: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const pattern =
    /Content-Disposition: form-data; name="([^"]+)"(; filename="[^"]*")?\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*?)\r\n--/gi;
  for (const match of raw.matchAll(pattern)) {
    if (match[2] === undefined && !(match[1]! in fields)) fields[match[1]!] = match[3]!;
  }
  return fields;
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** Resolves when the client closes the response (a stalled stream waits for this). */
const waitForClose = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    if (res.destroyed) resolve();
    else res.once('close', () => resolve());
  });

/** Starts the fake on 127.0.0.1 (port 0 = any free port). */
export async function startFakeOpenAi(initial: Partial<FakeBehaviour> = {}, port = 0): Promise<FakeOpenAi> {
  let behaviour: FakeBehaviour = { ...DEFAULT_FAKE_BEHAVIOUR, ...initial };
  let errorsSent = 0;
  let recording = true;
  let abortedCount = 0;
  let connectionCount = 0;
  let sequence = 0;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const completionTokenCache = new Map<string, number>();

  const completionTokens = (model: string, text: string): number => {
    const key = `${encodingForModel(model)}\n${text}`;
    let count = completionTokenCache.get(key);
    if (count === undefined) {
      count = countTextTokens(text, encodingForModel(model));
      if (completionTokenCache.size < 100) completionTokenCache.set(key, count);
    }
    return count;
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'x-request-id': `req_fake_${sequence}`,
      'openai-processing-ms': '1',
    });
    res.end(text);
  };

  const usageOf = (textPrompt: number, textCompletion: number) => {
    const fixed = behaviour.fixedUsage;
    const prompt = (fixed?.promptTokens ?? textPrompt) + behaviour.audioInputTokens;
    const completion = (fixed?.completionTokens ?? textCompletion) + behaviour.audioOutputTokens;
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: {
        cached_tokens: Math.min(behaviour.cachedTokens, prompt),
        audio_tokens: behaviour.audioInputTokens,
      },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: behaviour.audioOutputTokens,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
  };

  /** The loose shape of `looseShape` (see FakeBehaviour). */
  const loosen = (answer: Record<string, unknown>): Record<string, unknown> => {
    if (!behaviour.looseShape) return answer;
    const { object: _object, ...rest } = answer;
    const choices = Array.isArray(answer.choices)
      ? answer.choices.map((choice: Record<string, unknown>) => {
          const { index: _index, ...kept } = choice;
          if (kept.finish_reason === null) delete kept.finish_reason;
          return kept;
        })
      : answer.choices;
    return { ...rest, choices, x_vendor: 'extra' };
  };

  const chat = async (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o';
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const promptTokens = countChatPromptTokens(model, messages, Array.isArray(body.tools) ? body.tools : []);
    const reply = behaviour.emptyReply ? '' : behaviour.reply;
    const id = `chatcmpl-fake${++sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const fingerprint = 'fp_fake0001';

    if (body.stream !== true) {
      const completion = completionTokens(model, reply);
      const reasoning = behaviour.reasoning === '' ? {} : { reasoning_content: behaviour.reasoning };
      sendJson(
        res,
        200,
        loosen({
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: reply, ...reasoning, refusal: null, annotations: [] },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
          ...(behaviour.omitUsage ? {} : { usage: usageOf(promptTokens, completion) }),
          service_tier: behaviour.serviceTier,
          system_fingerprint: fingerprint,
        }),
      );
      return;
    }

    const length = fakeStreamLengthOf(body);
    if (length === 'invalid') {
      sendJson(res, 400, {
        error: {
          message: '`fake_stream` must be { chunks: 1..86400, interval_ms?: 0..60000 }',
          type: 'invalid_request_error',
          param: 'fake_stream',
          code: null,
        },
      });
      return;
    }
    const words = length === undefined ? wordsOf(reply) : repeatedWords(reply, length.chunks);
    const chunkDelayMs = length?.intervalMs ?? behaviour.chunkDelayMs;
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    const includeUsage = options?.include_usage === true && !behaviour.omitUsage;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': `req_fake_${sequence}`,
    });
    let closed = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        abortedCount += 1;
      }
    });
    const chunk = (choices: unknown[], usage?: unknown) =>
      `data: ${JSON.stringify(
        loosen({
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          service_tier: behaviour.serviceTier,
          system_fingerprint: fingerprint,
          choices,
          ...(includeUsage ? { usage: usage ?? null } : {}),
        }),
      )}\n\n`;
    const delta = (value: Record<string, unknown>, finish: string | null = null) => [
      { index: 0, delta: value, logprobs: null, finish_reason: finish },
    ];

    res.write(chunk(delta({ role: 'assistant', content: '', refusal: null })));
    if (behaviour.firstTokenDelayMs > 0) await sleep(behaviour.firstTokenDelayMs);
    for (const word of wordsOf(behaviour.reasoning)) res.write(chunk(delta({ reasoning_content: word })));
    let sent = 0;
    for (const word of words) {
      if (closed) return;
      if (behaviour.dropAfterChunks !== undefined && sent >= behaviour.dropAfterChunks) {
        // Let what was written reach the client before the connection is cut.
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        await sleep(20);
        req.socket.destroy();
        return;
      }
      if (sent > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs);
      if (closed) return;
      if (behaviour.stallAfterChunks !== undefined && sent >= behaviour.stallAfterChunks) {
        await waitForClose(res);
        return;
      }
      res.write(chunk(delta({ content: word })));
      sent += 1;
    }
    res.write(chunk(delta({}, 'stop')));
    const text = length === undefined ? reply : words.join('');
    if (includeUsage) res.write(chunk([], usageOf(promptTokens, completionTokens(model, text))));
    if (behaviour.endDelayMs > 0) {
      res.write('data: [DONE]\n\n');
      await sleep(behaviour.endDelayMs);
      res.end();
    } else res.end('data: [DONE]\n\n');
  };

  const embeddings = (res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'text-embedding-3-small';
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const dims = behaviour.embeddingDimensions;
    const data = inputs.map((_input, index) => {
      const vector = Array.from({ length: dims }, (_, i) => Math.round(Math.sin(index + i + 1) * 1e6) / 1e6);
      const embedding =
        body.encoding_format === 'base64'
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector;
      return { object: 'embedding', index, embedding };
    });
    const prompt = countInputTokens(model, body.input);
    sendJson(res, 200, {
      object: 'list',
      data,
      model,
      ...(behaviour.omitUsage ? {} : { usage: { prompt_tokens: prompt, total_tokens: prompt } }),
    });
  };

  /** Legacy completions: `choices[].text`, the same stream framing as chat. */
  const completions = async (res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'gpt-3.5-turbo-instruct';
    const promptTokens = countInputTokens(model, body.prompt);
    const reply = behaviour.emptyReply ? '' : behaviour.reply;
    const id = `cmpl-fake${++sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const completion = completionTokens(model, reply);
    if (body.stream !== true) {
      sendJson(res, 200, {
        id,
        object: 'text_completion',
        created,
        model,
        choices: [{ text: reply, index: 0, logprobs: null, finish_reason: 'stop' }],
        ...(behaviour.omitUsage ? {} : { usage: usageOf(promptTokens, completion) }),
      });
      return;
    }
    const includeUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true &&
      !behaviour.omitUsage;
    startStream(res);
    const chunk = (choices: unknown[], usage?: unknown) =>
      `data: ${JSON.stringify({ id, object: 'text_completion', created, model, choices, ...(usage ? { usage } : {}) })}\n\n`;
    if (behaviour.firstTokenDelayMs > 0) await sleep(behaviour.firstTokenDelayMs);
    for (const word of wordsOf(reply)) {
      if (behaviour.chunkDelayMs > 0) await sleep(behaviour.chunkDelayMs);
      if (res.destroyed) return;
      res.write(chunk([{ text: word, index: 0, logprobs: null, finish_reason: null }]));
    }
    res.write(chunk([{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }]));
    if (includeUsage) res.write(chunk([], usageOf(promptTokens, completion)));
    res.end('data: [DONE]\n\n');
  };

  const moderations = (res: ServerResponse, body: Record<string, unknown>) => {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const categories = { harassment: false, hate: false, 'self-harm': false, sexual: false, violence: false };
    const scores = {
      harassment: 0.0001,
      hate: 0.0001,
      'self-harm': 0.0001,
      sexual: 0.0002,
      violence: 0.0003,
    };
    sendJson(res, 200, {
      id: `modr-fake${++sequence}`,
      model: typeof body.model === 'string' ? body.model : 'text-moderation-007',
      results: inputs.map(() => ({ flagged: false, categories, category_scores: scores })),
    });
  };

  const rerank = (res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'jina-reranker-v2-base-multilingual';
    const documents = Array.isArray(body.documents) ? body.documents : [];
    const texts = documents.map((d) =>
      typeof d === 'string' ? d : String((d as { text?: unknown }).text ?? ''),
    );
    const results = texts
      .map((text, index) => ({
        index,
        relevance_score: Math.round((1 / (index + 1.5)) * 1e6) / 1e6,
        document: { text },
      }))
      .slice(0, typeof body.top_n === 'number' ? body.top_n : texts.length);
    const tokens = countInputTokens(model, [String(body.query ?? ''), ...texts]);
    if (behaviour.rerankStyle === 'cohere') {
      sendJson(res, 200, {
        id: `rerank-fake${++sequence}`,
        results: results.map(({ index, relevance_score }) => ({ index, relevance_score })),
        meta: { api_version: { version: '1' }, billed_units: { search_units: 1 } },
      });
      return;
    }
    sendJson(res, 200, {
      model,
      results,
      ...(behaviour.omitUsage ? {} : { usage: { total_tokens: tokens, prompt_tokens: tokens } }),
    });
  };

  /** The Responses API: a `response` object, or `response.*` events ending with `response.completed`. */
  const responses = async (res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o';
    const texts: string[] = [];
    if (typeof body.input === 'string') texts.push(body.input);
    else if (Array.isArray(body.input))
      for (const item of body.input) {
        const content = (item as { content?: unknown }).content;
        if (typeof content === 'string') texts.push(content);
      }
    const fixed = behaviour.fixedUsage;
    const inputTokens = fixed?.promptTokens ?? countInputTokens(model, texts) + 7;
    const reply = behaviour.emptyReply ? '' : behaviour.reply;
    const outputTokens = fixed?.completionTokens ?? completionTokens(model, reply);
    const id = `resp_fake${++sequence}`;
    const itemId = `msg_fake${sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: Math.min(behaviour.cachedTokens, inputTokens) },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    };
    const message = (text: string, status: string) => ({
      id: itemId,
      type: 'message',
      status,
      role: 'assistant',
      content:
        text === '' && status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [] }],
    });
    const response = (status: string, output: unknown[], withUsage: boolean) => ({
      id,
      object: 'response',
      created_at: created,
      status,
      model,
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      service_tier: behaviour.serviceTier,
      usage: withUsage && !behaviour.omitUsage ? usage : null,
    });
    // The searches run before the answer (https://platform.openai.com/docs/guides/tools-web-search).
    const searches = Array.from({ length: behaviour.webSearchCalls }, (_, at) => ({
      type: 'web_search_call',
      id: `ws_fake${sequence}_${at}`,
      status: 'completed',
      action: { type: 'search', query: `query ${at + 1}` },
    }));
    const call = responsesCallOf(body, behaviour.responsesToolCall, sequence);
    if (body.stream !== true) {
      sendJson(res, 200, response('completed', [...searches, call ?? message(reply, 'completed')], true));
      return;
    }
    startStream(res);
    let seq = 0;
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    event('response.created', { response: response('in_progress', [], false) });
    event('response.in_progress', { response: response('in_progress', [], false) });
    if (call) {
      event('response.output_item.added', {
        output_index: 0,
        item: { ...call, arguments: '', status: 'in_progress' },
      });
      event('response.function_call_arguments.delta', {
        item_id: call.id,
        output_index: 0,
        delta: call.arguments,
      });
      event('response.function_call_arguments.done', {
        item_id: call.id,
        output_index: 0,
        arguments: call.arguments,
      });
      event('response.output_item.done', { output_index: 0, item: call });
      event('response.completed', { response: response('completed', [call], true) });
      res.end();
      return;
    }
    for (const [at, search] of searches.entries()) {
      event('response.output_item.added', { output_index: at, item: { ...search, status: 'in_progress' } });
      event('response.web_search_call.completed', { output_index: at, item_id: search.id });
      event('response.output_item.done', { output_index: at, item: search });
    }
    event('response.output_item.added', { output_index: searches.length, item: message('', 'in_progress') });
    event('response.content_part.added', {
      item_id: itemId,
      output_index: searches.length,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    if (behaviour.firstTokenDelayMs > 0) await sleep(behaviour.firstTokenDelayMs);
    for (const word of wordsOf(reply)) {
      if (behaviour.chunkDelayMs > 0) await sleep(behaviour.chunkDelayMs);
      if (res.destroyed) return;
      event('response.output_text.delta', {
        item_id: itemId,
        output_index: searches.length,
        content_index: 0,
        delta: word,
        logprobs: [],
      });
    }
    event('response.output_text.done', {
      item_id: itemId,
      output_index: searches.length,
      content_index: 0,
      text: reply,
      logprobs: [],
    });
    event('response.content_part.done', {
      item_id: itemId,
      output_index: searches.length,
      content_index: 0,
      part: { type: 'output_text', text: reply, annotations: [] },
    });
    event('response.output_item.done', { output_index: searches.length, item: message(reply, 'completed') });
    event('response.completed', {
      response: response('completed', [...searches, message(reply, 'completed')], true),
    });
    res.end();
  };

  /** `/v1/responses/compact`: the user's messages kept, the rest as one opaque compaction item. */
  const compact = (res: ServerResponse, body: Record<string, unknown>) => {
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o';
    const items = Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input }];
    const users = items.filter(
      (item): item is Record<string, unknown> =>
        typeof item === 'object' && item !== null && (item as { role?: unknown }).role === 'user',
    );
    const texts = items.map((item) => JSON.stringify(item));
    const inputTokens = countInputTokens(model, texts);
    const outputTokens = 40;
    sequence += 1;
    sendJson(res, 200, {
      id: `resp_fake${sequence}`,
      object: 'response.compaction',
      created_at: Math.floor(Date.now() / 1000),
      output: [
        ...users.map((item, at) => ({
          id: `msg_fake${sequence}_${at}`,
          type: 'message',
          status: 'completed',
          role: 'user',
          content:
            typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content,
        })),
        { id: `cmp_fake${sequence}`, type: 'compaction', encrypted_content: `gAAAA-fake-${sequence}` },
      ],
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + outputTokens,
      },
    });
  };

  const images = (res: ServerResponse, fields: Record<string, unknown>) => {
    const n = Number(fields.n ?? 1) || 1;
    const data = Array.from({ length: n }, (_, i) =>
      fields.response_format === 'b64_json'
        ? { b64_json: Buffer.from(`fake image ${i}`).toString('base64') }
        : {
            url: `https://images.example.com/fake-${sequence}-${i}.png`,
            revised_prompt: String(fields.prompt ?? ''),
          },
    );
    sequence += 1;
    sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data });
  };

  /** Deterministic "MP3" bytes: an ID3 tag then the input text repeated. */
  const speech = (res: ServerResponse, body: Record<string, unknown>) => {
    const audio = Buffer.concat([
      Buffer.from('ID3\x04\x00'),
      Buffer.from(String(body.input ?? '').repeat(4)),
    ]);
    const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
    res.writeHead(200, {
      'content-type': format === 'wav' ? 'audio/wav' : 'audio/mpeg',
      'content-length': audio.length,
      'x-request-id': `req_fake_${++sequence}`,
    });
    res.end(audio);
  };

  const transcription = (
    res: ServerResponse,
    fields: Record<string, string>,
    task: 'transcribe' | 'translate',
  ) => {
    const text = behaviour.reply;
    const format = fields.response_format ?? 'json';
    const seconds = behaviour.audioSeconds;
    const usage =
      behaviour.transcriptionUsage === 'duration'
        ? { type: 'duration', seconds: Math.ceil(seconds) }
        : behaviour.transcriptionUsage === 'tokens'
          ? {
              type: 'tokens',
              input_tokens: 14,
              input_token_details: { text_tokens: 0, audio_tokens: 14 },
              output_tokens: completionTokens('gpt-4o', text),
              total_tokens: 14 + completionTokens('gpt-4o', text),
            }
          : undefined;
    if (format === 'text' || format === 'srt' || format === 'vtt') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        format === 'text' ? `${text}\n` : `1\n00:00:00,000 --> 00:00:0${Math.min(9, seconds)},000\n${text}\n`,
      );
      return;
    }
    if (format === 'verbose_json') {
      sendJson(res, 200, {
        task,
        language: 'english',
        duration: seconds,
        text,
        segments: [{ id: 0, seek: 0, start: 0, end: seconds, text }],
        ...(usage ? { usage } : {}),
      });
      return;
    }
    sendJson(res, 200, { text, ...(usage ? { usage } : {}) });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const rawBody = Buffer.concat(parts);
    const raw = rawBody.toString('utf8');
    let body: unknown = raw === '' ? undefined : raw;
    if (raw !== '' && (req.headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(raw);
      } catch {
        sendJson(res, 400, {
          error: {
            message: 'We could not parse the JSON body of your request.',
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        });
        return;
      }
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (recording) requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, rawBody });

    if (behaviour.headersDelayMs > 0) await sleep(behaviour.headersDelayMs);
    if (behaviour.apiKey !== undefined && req.headers.authorization !== `Bearer ${behaviour.apiKey}`) {
      sendJson(res, 401, fakeErrorBody(401));
      return;
    }
    if (
      behaviour.error !== undefined &&
      (behaviour.errorTimes === undefined || errorsSent < behaviour.errorTimes)
    ) {
      errorsSent += 1;
      sendJson(res, behaviour.error, fakeErrorBody(behaviour.error));
      return;
    }
    const json = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (req.method === 'POST' && path === '/v1/chat/completions') return chat(req, res, json);
    if (req.method === 'POST' && path === '/v1/embeddings') return embeddings(res, json);
    if (req.method === 'POST' && path === '/v1/completions') return completions(res, json);
    if (req.method === 'POST' && path === '/v1/moderations') return moderations(res, json);
    if (req.method === 'POST' && path === '/v1/rerank') return rerank(res, json);
    if (req.method === 'POST' && path === '/v1/responses') return responses(res, json);
    if (req.method === 'POST' && path === '/v1/responses/compact') return compact(res, json);
    if (req.method === 'POST' && path === '/v1/images/generations') return images(res, json);
    if (req.method === 'POST' && path === '/v1/images/edits') return images(res, formFields(raw));
    if (req.method === 'POST' && path === '/v1/audio/speech') return speech(res, json);
    if (req.method === 'POST' && path === '/v1/audio/transcriptions')
      return transcription(res, formFields(raw), 'transcribe');
    if (req.method === 'POST' && path === '/v1/audio/translations')
      return transcription(res, formFields(raw), 'translate');
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: MODELS.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })),
      });
      return;
    }
    const modelMatch = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && modelMatch) {
      const id = decodeURIComponent(modelMatch[1] as string);
      if (MODELS.includes(id))
        sendJson(res, 200, { id, object: 'model', created: 1_700_000_000, owned_by: 'system' });
      else
        sendJson(res, 404, {
          error: {
            message: `The model '${id}' does not exist`,
            type: 'invalid_request_error',
            param: 'model',
            code: 'model_not_found',
          },
        });
      return;
    }
    sendJson(res, 404, {
      error: {
        message: `Invalid URL (${req.method} ${path})`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  };

  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, fakeErrorBody(500));
      else res.destroy(error instanceof Error ? error : undefined);
    });
  });
  server.on('connection', (socket) => {
    connectionCount += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // The backlog of a relay pod (server/src/main.ts), so the bench's thousands of streams reach it at once.
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    get abortedCount() {
      return abortedCount;
    },
    get connectionCount() {
      return connectionCount;
    },
    setBehaviour(change) {
      behaviour = { ...behaviour, ...change };
      if ('error' in change || 'errorTimes' in change) errorsSent = 0;
    },
    setRecording(on) {
      recording = on;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

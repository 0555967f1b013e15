/**
 * Gemini clients (https://ai.google.dev/api/generate-content), `@google/genai` among them: the key in
 * `x-goog-api-key` or `?key=`, the model and action in the path (`/v1beta/models/<model>:generateContent`),
 * errors as `{ error: { code, message, status } }`, streams as one whole `GenerateContentResponse` per `data:`
 * event (`alt=sse`) or per element of one JSON array (without it).
 *
 * Request (Gemini → chat): `systemInstruction` becomes a system message, `contents` user and assistant
 * messages (`inlineData` as a data URL image, `functionCall` as `tool_calls`, `functionResponse` as a `tool`
 * message), `functionDeclarations` tools, `functionCallingConfig` the `tool_choice`, `generationConfig` the
 * sampling fields and `thinkingConfig` a `reasoning_effort`. Answer (chat → Gemini): the parts of one candidate
 * (thoughts marked `thought`), `finishReason`, `usageMetadata`. In a stream a function call is sent whole, when
 * its arguments are complete. Google Search grounding becomes the channel's own web search (Anthropic's server
 * tool) or is left out and the client told (docs/adr/0029); other tools only Gemini runs (`codeExecution`,
 * `urlContext`, ...) are refused with a 400 naming them unless a Gemini channel serves the model; grounding
 * metadata exists only on the Gemini path.
 */

import type { Ingress, NormalisedUsage, RelayError, StreamEncoder } from '../../contract.ts';
import { localError } from '../../errors.ts';
import { formatSseEvent } from '../../sse.ts';
import { asNumber, contentText, isRecord, type Json, parseArguments } from '../canonical.ts';
import { bearerKey, withRequestId } from '../ingress.ts';
import { FINISH_REASON_OF } from './chat.ts';
import { geminiStatus } from './errors.ts';
import { toGeminiUsage } from './usage.ts';

export const geminiErrorBody = (error: RelayError, requestId: string) => ({
  error: {
    code: error.status,
    message: withRequestId(error.message, requestId),
    status:
      typeof error.code === 'string' && /^[A-Z_]+$/.test(error.code)
        ? error.code
        : geminiStatus(error.status),
  },
});

/** The `key` query parameter of a URL. */
function queryKey(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at === -1) return undefined;
  const key = new URLSearchParams(url.slice(at + 1)).get('key');
  return key === null || key === '' ? undefined : key;
}

function chatParts(parts: readonly Json[]): unknown {
  const out: Json[] = [];
  for (const part of parts) {
    if (typeof part.text === 'string' && part.thought !== true) out.push({ type: 'text', text: part.text });
    else if (isRecord(part.inlineData))
      out.push({
        type: 'image_url',
        image_url: { url: `data:${part.inlineData.mimeType};base64,${part.inlineData.data}` },
      });
    else if (isRecord(part.fileData) && typeof part.fileData.fileUri === 'string')
      out.push({ type: 'image_url', image_url: { url: part.fileData.fileUri } });
  }
  return out.length === 1 && out[0]?.type === 'text' ? out[0].text : out;
}

/** Gemini's `Schema` (`type` in capitals: `OBJECT`) as the JSON schema a chat upstream reads (`object`). */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isRecord(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema))
    out[key] =
      key === 'type' && typeof value === 'string' && /^[A-Z]+$/.test(value) && value !== 'TYPE_UNSPECIFIED'
        ? value.toLowerCase()
        : jsonSchemaOf(value);
  return out;
}

/** Gemini's Google Search grounding tools (the current one, the 1.5 one, and the REST spelling). */
const GOOGLE_SEARCH_TOOLS: ReadonlySet<string> = new Set([
  'googleSearch',
  'googleSearchRetrieval',
  'google_search',
]);

const partsOf = (content: unknown): Json[] =>
  isRecord(content) && Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];

export function geminiToChatRequest(body: Readonly<Json>, model: string, isStream: boolean): Json {
  const messages: Json[] = [];
  const system = partsOf(body.systemInstruction);
  if (system.length > 0) messages.push({ role: 'system', content: contentText(chatParts(system)) });
  let callCount = 0;
  const pendingIds: string[] = [];
  for (const content of Array.isArray(body.contents) ? body.contents : []) {
    if (!isRecord(content)) continue;
    const parts = partsOf(content);
    if (content.role === 'model') {
      const message: Json = { role: 'assistant', content: contentText(chatParts(parts)) };
      const calls = parts
        .filter((part) => isRecord(part.functionCall))
        .map((part) => {
          const call = part.functionCall as Json;
          const id = typeof call.id === 'string' ? call.id : `call_${callCount}`;
          callCount += 1;
          pendingIds.push(id);
          return {
            id,
            type: 'function',
            function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
          };
        });
      if (calls.length > 0) message.tool_calls = calls;
      messages.push(message);
      continue;
    }
    for (const part of parts) {
      if (!isRecord(part.functionResponse)) continue;
      const response = part.functionResponse;
      messages.push({
        role: 'tool',
        tool_call_id:
          typeof response.id === 'string' ? response.id : (pendingIds.shift() ?? String(response.name)),
        content: JSON.stringify(response.response ?? {}),
      });
    }
    const rest = parts.filter((part) => !isRecord(part.functionResponse));
    if (rest.length > 0) messages.push({ role: 'user', content: chatParts(rest) });
  }
  const chat: Json = { model, messages, stream: isStream };
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  if (asNumber(config.temperature) !== undefined) chat.temperature = config.temperature;
  if (asNumber(config.topP) !== undefined) chat.top_p = config.topP;
  if (asNumber(config.maxOutputTokens) !== undefined) chat.max_tokens = config.maxOutputTokens;
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0)
    chat.stop = config.stopSequences;
  if (asNumber(config.candidateCount) !== undefined) chat.n = config.candidateCount;
  if (config.responseMimeType === 'application/json') chat.response_format = { type: 'json_object' };
  if (isRecord(config.thinkingConfig)) {
    const budget = asNumber(config.thinkingConfig.thinkingBudget);
    if (budget === 0) chat.reasoning_effort = 'none';
    else if (budget !== undefined && budget > 0)
      chat.reasoning_effort = budget <= 2048 ? 'low' : budget <= 12_000 ? 'medium' : 'high';
  }
  const declarations: Json[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : [])
    if (isRecord(tool) && Array.isArray(tool.functionDeclarations))
      declarations.push(...tool.functionDeclarations.filter(isRecord));
  const searches = (Array.isArray(body.tools) ? body.tools : []).some(
    (tool) => isRecord(tool) && Object.keys(tool).some((name) => GOOGLE_SEARCH_TOOLS.has(name)),
  );
  if (searches) chat.hosted_tools = [{ type: 'web_search' }];
  if (declarations.length > 0)
    chat.tools = declarations.map((fn) => ({
      type: 'function',
      function: {
        name: fn.name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        parameters: isRecord(fn.parameters)
          ? jsonSchemaOf(fn.parameters)
          : isRecord(fn.parametersJsonSchema)
            ? fn.parametersJsonSchema
            : { type: 'object', properties: {} },
      },
    }));
  const calling =
    isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig)
      ? body.toolConfig.functionCallingConfig
      : undefined;
  if (calling?.mode === 'NONE') chat.tool_choice = 'none';
  else if (calling?.mode === 'ANY') {
    const names = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
    chat.tool_choice = names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
  }
  return chat;
}

function callParts(calls: readonly Json[]): Json[] {
  return calls.map((call) => {
    const fn = isRecord(call.function) ? call.function : {};
    return { functionCall: { name: fn.name, args: parseArguments(fn.arguments) } };
  });
}

export function chatToGeminiAnswer(answer: Json, usage: NormalisedUsage, model: string): Json {
  const choices = Array.isArray(answer.choices) ? answer.choices.filter(isRecord) : [];
  return {
    candidates: choices.map((choice, index) => {
      const message = isRecord(choice.message) ? choice.message : {};
      const parts: Json[] = [];
      if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '')
        parts.push({ text: message.reasoning_content, thought: true });
      const text = contentText(message.content);
      if (text !== '') parts.push({ text });
      parts.push(...callParts(Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : []));
      const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop';
      return { content: { role: 'model', parts }, finishReason: FINISH_REASON_OF[finish] ?? 'STOP', index };
    }),
    usageMetadata: toGeminiUsage(usage),
    modelVersion: model,
    responseId: typeof answer.id === 'string' ? answer.id : undefined,
  };
}

/**
 * How a Gemini stream is framed for the client: server-sent events (`alt=sse`, what the SDKs ask for), or, without
 * `alt=sse`, one JSON array whose elements arrive one by one (Gemini's default streaming format).
 */
interface Framing {
  readonly contentType: string | undefined;
  element(json: string): string;
  /** The end of a stream that wrote `elements` elements. */
  close(elements: number): string;
}

const SSE_FRAMING: Framing = {
  contentType: undefined,
  element: (json) => formatSseEvent(json),
  close: () => '',
};

const ARRAY_FRAMING: Framing = {
  contentType: 'application/json',
  element: (json) => `,\r\n${json}`,
  close: (elements) => (elements === 0 ? '[]' : '\r\n]'),
};

/** Whether a request asks for a server-sent-events stream (`alt=sse`). */
const asksSse = (url: string): boolean => /[?&]alt=sse(&|$)/.test(url);

/** Canonical chunks as Gemini stream events; tool calls are held until their arguments are whole. */
export function createGeminiEncoder(
  _body: Readonly<Json>,
  model: string,
  requestId: string,
  url = '?alt=sse',
): StreamEncoder {
  const framing = asksSse(url) ? SSE_FRAMING : ARRAY_FRAMING;
  const calls = new Map<number, { name: string; arguments: string }>();
  let finish: string | undefined;
  let elements = 0;
  const elementText = (json: string) => {
    elements += 1;
    // An array opens with its first element.
    return elements === 1 && framing === ARRAY_FRAMING ? `[${json}` : framing.element(json);
  };
  const element = (value: unknown) => elementText(JSON.stringify(value));
  const frame = (parts: Json[]) =>
    element({
      candidates: [{ content: { role: 'model', parts }, index: 0 }],
      modelVersion: model,
      responseId: requestId,
    });
  return {
    quotaComment: false,
    contentType: framing.contentType,
    // Events of a Gemini upstream pass as they came, as elements of the array when the client asked for one.
    passEvent: framing === ARRAY_FRAMING ? elementText : undefined,
    chunk(chunk) {
      const choice =
        Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : undefined;
      const delta = choice && isRecord(choice.delta) ? choice.delta : {};
      const parts: Json[] = [];
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '')
        parts.push({ text: delta.reasoning_content, thought: true });
      if (typeof delta.content === 'string' && delta.content !== '') parts.push({ text: delta.content });
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isRecord(call)) continue;
        const index = typeof call.index === 'number' ? call.index : 0;
        const fn = isRecord(call.function) ? call.function : {};
        const held = calls.get(index) ?? { name: '', arguments: '' };
        if (typeof fn.name === 'string') held.name += fn.name;
        if (typeof fn.arguments === 'string') held.arguments += fn.arguments;
        calls.set(index, held);
      }
      if (choice && typeof choice.finish_reason === 'string') finish = choice.finish_reason;
      return parts.length > 0 ? frame(parts) : '';
    },
    end(usage) {
      const parts = [...calls.values()].map((call) => ({
        functionCall: { name: call.name, args: parseArguments(call.arguments) },
      }));
      return element({
        candidates: [
          {
            content: { role: 'model', parts },
            finishReason: FINISH_REASON_OF[finish ?? 'stop'] ?? 'STOP',
            index: 0,
          },
        ],
        usageMetadata: toGeminiUsage(usage),
        modelVersion: model,
        responseId: requestId,
      });
    },
    // An array still closes after its error, so the client reads the error rather than broken JSON.
    error: (error) =>
      element(geminiErrorBody(error, requestId)) + (framing === ARRAY_FRAMING ? framing.close(elements) : ''),
    get done() {
      return framing.close(elements);
    },
  };
}

/**
 * Why a `generateContent` request cannot go to a channel of another format: a tool only Gemini runs (code execution,
 * URL context, ... — any tool entry other than `functionDeclarations` and Google Search). A 400 naming it. Google
 * Search is not a reason: another channel runs its own search, or it is left out and the client told (ADR 0029).
 */
export function refuseGeminiConversion(body: Readonly<Json>): RelayError | undefined {
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool)) continue;
    const builtIn = Object.keys(tool).find(
      (name) => name !== 'functionDeclarations' && !GOOGLE_SEARCH_TOOLS.has(name),
    );
    if (builtIn !== undefined)
      return localError(
        400,
        'INVALID_ARGUMENT',
        `tools: the built-in tool ${builtIn} is not supported for this model: only a Gemini channel runs it, and the model's channel is of another provider; leave the tool out or use a model a Gemini channel serves`,
        'invalid_request_error',
      );
  }
  return undefined;
}

/** The text of an embedding request's `content` (its text parts, one per line). */
const embedText = (content: unknown): string =>
  partsOf(content)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');

/**
 * An `embedContent` (`content`) or `batchEmbedContents` (`requests[].content`) request as OpenAI's embeddings
 * request (https://platform.openai.com/docs/api-reference/embeddings/create): one input per content, floats, and
 * `outputDimensionality` as `dimensions`. `taskType` and `title` have no OpenAI equivalent and are left out.
 */
export function geminiEmbedToOpenAi(body: Readonly<Json>, model: string): Json {
  const requests = Array.isArray(body.requests) ? body.requests.filter(isRecord) : undefined;
  const input = requests ? requests.map((request) => embedText(request.content)) : embedText(body.content);
  const dimensions = asNumber(requests ? requests[0]?.outputDimensionality : body.outputDimensionality);
  return {
    model,
    input,
    encoding_format: 'float',
    ...(dimensions !== undefined ? { dimensions } : {}),
  };
}

/** Vectors of an OpenAI embeddings list, in input order. */
function vectorsOf(answer: Json): unknown[][] {
  const data = Array.isArray(answer.data) ? answer.data.filter(isRecord) : [];
  return [...data]
    .sort((a, b) => (asNumber(a.index) ?? 0) - (asNumber(b.index) ?? 0))
    .map((item) => (Array.isArray(item.embedding) ? item.embedding : []));
}

/** An OpenAI embeddings answer as `embedContent`'s `{ embedding: { values } }`. */
export const openAiToEmbedContent = (answer: Json): Json => ({
  embedding: { values: vectorsOf(answer)[0] ?? [] },
});

/** An OpenAI embeddings answer as `batchEmbedContents`' `{ embeddings: [{ values }] }`. */
export const openAiToBatchEmbed = (answer: Json): Json => ({
  embeddings: vectorsOf(answer).map((values) => ({ values })),
});

/** A batch whose requests differ in `outputDimensionality` cannot be one OpenAI request. */
function refuseEmbedConversion(body: Readonly<Json>): RelayError | undefined {
  const requests = Array.isArray(body.requests) ? body.requests.filter(isRecord) : [];
  const sizes = new Set(requests.map((request) => asNumber(request.outputDimensionality)));
  return sizes.size > 1
    ? localError(
        400,
        'INVALID_ARGUMENT',
        'requests: every request of a batch must ask for the same outputDimensionality on this model',
        'invalid_request_error',
      )
    : undefined;
}

export const geminiIngress: Ingress = {
  format: 'gemini',
  keyOf: (request) => {
    const header = request.headers['x-goog-api-key'];
    if (typeof header === 'string' && header !== '') return header;
    return queryKey(request.url) ?? bearerKey(request.headers.authorization);
  },
  errorBody: geminiErrorBody,
  toChat: geminiToChatRequest,
  refuseConversion: refuseGeminiConversion,
  fromChat: chatToGeminiAnswer,
  streamEncoder: createGeminiEncoder,
};

/**
 * Gemini embedding clients on a channel of another format: the request goes up as OpenAI's embeddings request
 * and the answer comes back as `embedContent`'s (`embedBatch` false) or `batchEmbedContents`' (true).
 */
export function geminiEmbedIngress(embedBatch: boolean): Ingress {
  return {
    ...geminiIngress,
    toChat: (body, model) => geminiEmbedToOpenAi(body, model),
    fromChat: embedBatch ? openAiToBatchEmbed : openAiToEmbedContent,
    refuseConversion: refuseEmbedConversion,
  };
}

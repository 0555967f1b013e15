/**
 * Gemini `generateContent` (https://ai.google.dev/api/generate-content) to and from the canonical chat shape.
 *
 * Request (chat → Gemini): system messages become `systemInstruction`; user and assistant turns `contents` with
 * roles `user` and `model`; a `data:` image URL becomes `inlineData`, another URL `fileData`; assistant
 * `tool_calls` become `functionCall` parts and `tool` messages `functionResponse` parts (named after the call
 * they answer); tools become `functionDeclarations` (as Gemini's `Schema`: only its fields, types in capitals) and
 * `tool_choice` the `functionCallingConfig` mode; `temperature`, `top_p`, `max_tokens`, `stop`, `n`, JSON output
 * map into `generationConfig`. `reasoning_effort` sets `thinkingConfig` (with thoughts included); with
 * `gemini.thinking_adapter_enabled`, a `-thinking` model suffix includes thoughts with a budget of
 * `gemini.thinking_adapter_budget_tokens_percentage` of the output limit, and `-nothinking` turns thinking off.
 * `gemini.safety_settings` is sent for every harm category. For Gemini 3 and later, whose function calls must come
 * back with their thought signatures, the first call of each model turn gets Gemini's documented stand-in.
 *
 * Answer (Gemini → chat): the first candidate's text parts (thoughts as `reasoning_content`), `functionCall`
 * parts as `tool_calls`, `finishReason` mapped, `usageMetadata` (cached and thought tokens) as usage.
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
} from '../canonical.ts';
import type { FormatOptions } from '../format.ts';
import { geminiUsageOf } from './usage.ts';

const HARM_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
];

/** Thinking budget of each `reasoning_effort`. */
const EFFORT_BUDGET: Readonly<Record<string, number>> = {
  minimal: 128,
  low: 1024,
  medium: 8192,
  high: 24576,
};
const DEFAULT_OUTPUT_LIMIT = 8192;

/** `finishReason` → `finish_reason`. */
export function finishOf(reason: string | undefined, hasToolCalls: boolean): string | null {
  if (reason === undefined) return null;
  if (hasToolCalls) return 'tool_calls';
  if (reason === 'STOP') return 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  return 'content_filter';
}

/** `finish_reason` → `finishReason`. */
export const FINISH_REASON_OF: Readonly<Record<string, string>> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
};

/** JSON-schema type names, which Gemini's `Schema.type` spells in capitals (`OBJECT`, `STRING`, ...). */
const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/**
 * The fields of Gemini's `Schema` (https://ai.google.dev/api/caching#Schema; `@google/genai`'s `Schema` type):
 * the API refuses any other name ("Invalid JSON payload received. Unknown name ...").
 */
const SCHEMA_FIELDS = new Set([
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

/**
 * A JSON schema as Gemini's `Schema`: only the fields it knows (`$schema`, `additionalProperties`,
 * `exclusiveMinimum`, `$ref`, ... left out), `type` in capitals, a type list (`["string", "null"]`) as one type
 * and `nullable`, `oneOf` as `anyOf`, a string `const` as a one-value `enum`; property names kept as they are.
 */
export function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (!isRecord(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string' && SCHEMA_TYPES.has(value))
      out.type = value.toUpperCase();
    else if (
      key === 'type' &&
      Array.isArray(value) &&
      value.every((type) => SCHEMA_TYPES.has(String(type)))
    ) {
      const types = value.map(String).filter((type) => type !== 'null');
      if (types.length === 1) out.type = (types[0] as string).toUpperCase();
      if (types.length < value.length) out.nullable = true;
    } else if (key === 'properties' && isRecord(value))
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, field]) => [name, cleanSchema(field)]),
      );
    else if (key === 'oneOf' && Array.isArray(value) && schema.anyOf === undefined)
      out.anyOf = cleanSchema(value);
    else if (key === 'const' && typeof value === 'string' && schema.enum === undefined) out.enum = [value];
    else if (SCHEMA_FIELDS.has(key))
      out[key] = key === 'items' || key === 'anyOf' ? cleanSchema(value) : value;
  }
  return out;
}

function parts(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const out: Json[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') out.push({ text: part.text });
    else if (part.type === 'image_url') {
      const url = isRecord(part.image_url) ? asString(part.image_url.url) : asString(part.image_url);
      if (url === undefined) continue;
      const data = parseDataUrl(url);
      out.push(
        data ? { inlineData: { mimeType: data.mediaType, data: data.data } } : { fileData: { fileUri: url } },
      );
    }
  }
  return out;
}

function pushTurn(contents: Json[], role: 'user' | 'model', turnParts: Json[]): void {
  if (turnParts.length === 0) return;
  const last = contents.at(-1);
  if (last && last.role === role && Array.isArray(last.parts)) (last.parts as Json[]).push(...turnParts);
  else contents.push({ role, parts: turnParts });
}

/** The model named upstream and the thinking it asks for (the thinking adapter's suffixes). */
function thinkingOf(
  chat: ChatRequest,
  model: string,
  options: FormatOptions,
  outputLimit: number | undefined,
): { model: string; thinking: Json | undefined } {
  if (options.get('gemini.thinking_adapter_enabled')) {
    if (model.endsWith('-nothinking'))
      return { model: model.slice(0, -'-nothinking'.length), thinking: { thinkingBudget: 0 } };
    if (model.endsWith('-thinking')) {
      const share = options.get('gemini.thinking_adapter_budget_tokens_percentage');
      return {
        model: model.slice(0, -'-thinking'.length),
        thinking: {
          includeThoughts: true,
          thinkingBudget: Math.floor((outputLimit ?? DEFAULT_OUTPUT_LIMIT) * share),
        },
      };
    }
  }
  const effort = asString(chat.reasoning_effort);
  if (effort === 'none') return { model, thinking: { thinkingBudget: 0 } };
  if (effort !== undefined)
    return { model, thinking: { includeThoughts: true, thinkingBudget: EFFORT_BUDGET[effort] ?? -1 } };
  return { model, thinking: undefined };
}

/**
 * The signature Gemini documents for a function call it did not sign itself ("context engineering", a history
 * from another model): https://ai.google.dev/gemini-api/docs/thought-signatures.
 */
export const UNSIGNED_CALL_SIGNATURE = 'skip_thought_signature_validator';

/** Gemini 3 and later refuse a function call in the history without its thought signature. */
export function needsThoughtSignatures(model: string): boolean {
  const major = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

/**
 * The chat history keeps no thought signatures, so the first function call of each model turn (where Gemini puts
 * the signature of parallel calls) gets the documented stand-in.
 */
function signCalls(contents: readonly Json[]): void {
  for (const content of contents) {
    if (content.role !== 'model' || !Array.isArray(content.parts)) continue;
    const call = (content.parts as Json[]).find((part) => isRecord(part.functionCall));
    if (call && typeof call.thoughtSignature !== 'string') call.thoughtSignature = UNSIGNED_CALL_SIGNATURE;
  }
}

/** The canonical request as a Gemini `GenerateContentRequest`, and the model to call. */
export function chatToGemini(
  chat: ChatRequest,
  model: string,
  options: FormatOptions,
): { model: string; body: Json } {
  const system: Json[] = [];
  const contents: Json[] = [];
  const callNames = new Map<string, string>();
  for (const message of Array.isArray(chat.messages) ? chat.messages : []) {
    if (!isRecord(message)) continue;
    const { role } = message;
    if (role === 'system' || role === 'developer') system.push(...parts(message.content));
    else if (role === 'assistant') {
      const turn = parts(message.content);
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        const name = asString(call.function.name) ?? '';
        if (typeof call.id === 'string') callNames.set(call.id, name);
        turn.push({ functionCall: { name, args: parseArguments(call.function.arguments) } });
      }
      pushTurn(contents, 'model', turn);
    } else if (role === 'tool') {
      const id = asString(message.tool_call_id) ?? '';
      const text = contentText(message.content);
      let response: unknown;
      try {
        response = JSON.parse(text);
      } catch {
        response = undefined;
      }
      pushTurn(contents, 'user', [
        {
          functionResponse: {
            name: callNames.get(id) ?? asString(message.name) ?? id,
            response: isRecord(response) ? response : { content: text },
          },
        },
      ]);
    } else pushTurn(contents, 'user', parts(message.content));
  }

  const outputLimit = asNumber(chat.max_completion_tokens) ?? asNumber(chat.max_tokens);
  const thinking = thinkingOf(chat, model, options, outputLimit);
  const generationConfig: Json = {};
  const temperature = asNumber(chat.temperature);
  if (temperature !== undefined) generationConfig.temperature = temperature;
  const topP = asNumber(chat.top_p);
  if (topP !== undefined) generationConfig.topP = topP;
  if (outputLimit !== undefined) generationConfig.maxOutputTokens = outputLimit;
  const stop = typeof chat.stop === 'string' ? [chat.stop] : Array.isArray(chat.stop) ? chat.stop : undefined;
  if (stop && stop.length > 0) generationConfig.stopSequences = stop;
  const n = asNumber(chat.n);
  if (n !== undefined && n > 1) generationConfig.candidateCount = n;
  if (isRecord(chat.response_format) && chat.response_format.type !== 'text') {
    generationConfig.responseMimeType = 'application/json';
    const schema = isRecord(chat.response_format.json_schema)
      ? chat.response_format.json_schema.schema
      : undefined;
    if (isRecord(schema)) generationConfig.responseSchema = cleanSchema(schema);
  }
  if (thinking.thinking) generationConfig.thinkingConfig = thinking.thinking;

  const safety = options.get('gemini.safety_settings');
  const body: Json = {
    contents,
    safetySettings: HARM_CATEGORIES.map((category) => ({
      category,
      threshold: safety[category] ?? safety.default ?? 'OFF',
    })),
  };
  if (system.length > 0) body.systemInstruction = { parts: system };
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  if (Array.isArray(chat.tools) && chat.tools.length > 0) {
    const declarations = chat.tools
      .filter((tool): tool is Json => isRecord(tool) && isRecord(tool.function))
      .map((tool) => {
        const fn = tool.function as Json;
        const out: Json = { name: fn.name };
        if (typeof fn.description === 'string') out.description = fn.description;
        if (isRecord(fn.parameters)) out.parameters = cleanSchema(fn.parameters);
        return out;
      });
    body.tools = [{ functionDeclarations: declarations }];
    const choice = chat.tool_choice;
    const mode =
      choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : isRecord(choice) ? 'ANY' : undefined;
    if (mode) {
      const config: Json = { mode };
      if (isRecord(choice) && isRecord(choice.function)) config.allowedFunctionNames = [choice.function.name];
      body.toolConfig = { functionCallingConfig: config };
    }
  }
  // A hosted web search is Google Search grounding, a tool of its own beside the function declarations.
  if (hostedToolsOf(chat).some((tool) => hostedKindOf(tool.type) === 'web_search'))
    body.tools = [...(Array.isArray(body.tools) ? body.tools : []), { googleSearch: {} }];
  if (needsThoughtSignatures(thinking.model)) signCalls(contents);
  return { model: thinking.model, body };
}

/** The parts of the first candidate as chat fields. */
export function readParts(candidate: unknown): { text: string; reasoning: string; calls: Json[] } {
  let text = '';
  let reasoning = '';
  const calls: Json[] = [];
  const content = isRecord(candidate) ? candidate.content : undefined;
  for (const part of isRecord(content) && Array.isArray(content.parts) ? content.parts : []) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else text += part.text;
    } else if (isRecord(part.functionCall)) calls.push(part.functionCall);
  }
  return { text, reasoning, calls };
}

/** A Gemini answer as a `chat.completion`. */
export function geminiToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  const candidates = Array.isArray(answer.candidates) ? answer.candidates : [];
  const choices = candidates.map((candidate, index) => {
    const { text, reasoning, calls } = readParts(candidate);
    const message: Json = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
    if (reasoning !== '') message.reasoning_content = reasoning;
    if (calls.length > 0)
      message.tool_calls = calls.map((call, at) => ({
        id: asString(call.id) ?? `call_${index}_${at}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
      }));
    const reason = isRecord(candidate) ? asString(candidate.finishReason) : undefined;
    return { index, message, finish_reason: finishOf(reason, calls.length > 0) };
  });
  const usage = geminiUsageOf(answer, model);
  return {
    answer: {
      id: asString(answer.responseId) ?? 'gemini',
      object: 'chat.completion',
      created: nowSeconds(),
      model: asString(answer.modelVersion) ?? model,
      choices,
      ...(usage ? { usage: toOpenAiUsage(usage) } : {}),
    },
    usage,
  };
}

/** An OpenAI embeddings request (`input`: a string or strings) as `batchEmbedContents`. */
export function embeddingsToGemini(request: Readonly<Json>, model: string): Json {
  const input = request.input;
  const texts =
    typeof input === 'string'
      ? [input]
      : Array.isArray(input)
        ? input.filter((x) => typeof x === 'string')
        : [];
  const dimensions = asNumber(request.dimensions);
  return {
    requests: texts.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    })),
  };
}

/** `batchEmbedContents` (or `embedContent`) answer as OpenAI's embeddings list; Gemini reports no usage. */
export function geminiToEmbeddings(answer: Readonly<Json>, model: string): ChatAnswer {
  const list = Array.isArray(answer.embeddings)
    ? answer.embeddings
    : isRecord(answer.embedding)
      ? [answer.embedding]
      : [];
  return {
    answer: {
      object: 'list',
      data: list.map((embedding, index) => ({
        object: 'embedding',
        index,
        embedding: isRecord(embedding) && Array.isArray(embedding.values) ? embedding.values : [],
      })),
      model,
    },
    usage: undefined,
  };
}

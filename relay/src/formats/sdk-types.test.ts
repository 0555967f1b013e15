/**
 * The fixtures' provider shapes checked against the official SDKs' TypeScript types: every fixture part is put
 * into a source file as `<json> satisfies <SDK type>` and type-checked by the TypeScript compiler, so a field the
 * SDK does not know, a wrong enum value or a missing required field fails here with tsc's own message.
 *
 * Anthropic (`@anthropic-ai/sdk`): requests as `MessageCreateParams` (fixtures hold the part a case is about:
 * top-level fields optional), answers as `Message`, stream events as `RawMessageStreamEvent` (an `error` event as
 * `ErrorResponse` without the request id a stream does not carry), error bodies as `ErrorResponse`. Gemini
 * (`@google/genai`, whose types mirror the REST shapes with string enums): requests as the REST
 * `GenerateContentRequest` built from the SDK's `Content`, `Tool`, `ToolConfig`, `SafetySetting` and
 * `GenerationConfig`, answers and stream events as `GenerateContentResponse`'s data fields; Gemini's error body
 * has no SDK type. The canonical side (`chatRequest`) is checked against the `openai` SDK's
 * `ChatCompletionCreateParams`, with the two extensions the relay reads on top (`reasoning_content` is output
 * only; `cache_control` on content parts, passed to Anthropic).
 *
 * Each fixture names what it was checked against (`checkedAgainstSdkTypes`); where its upstream side came from is
 * fixtures.test.ts's check.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The installed version of a package (in the workspace's node_modules or the root's). */
function versionOf(name: string): string {
  const dirs = [path.resolve(import.meta.dirname, '../..'), path.resolve(import.meta.dirname, '../../..')];
  const dir = dirs.find((candidate) =>
    existsSync(path.join(candidate, 'node_modules', name, 'package.json')),
  );
  if (dir === undefined) throw new Error(`${name} is not installed`);
  const manifest = readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

const SDK_VERSIONS = {
  anthropic: `@anthropic-ai/sdk ${versionOf('@anthropic-ai/sdk')}`,
  gemini: `@google/genai ${versionOf('@google/genai')}`,
  openai: `openai ${versionOf('openai')}`,
};

/** The preamble of every checked file: the SDK types and the wire forms of the Gemini SDK's string enums. */
const PREAMBLE = `
import type Anthropic from '@anthropic-ai/sdk';
import type * as Genai from '@google/genai';
import type OpenAI from 'openai';
/** A Gemini SDK type as it is on the wire: its string enums as their values. */
type Wire<T> = T extends string ? \`\${T}\` : T extends readonly (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;
/**
 * An Anthropic SDK response type as the wire may carry it: the SDK declares every field the API can return as
 * required, nullable ones included (\`citations: null\`, \`container: null\`); a field that may be null may also
 * be absent. So may \`caller\` of a tool use, which API version 2026-10-21 (the SDK's) added and 2023-06-01 (the
 * adapter's) does not send. Unknown fields, wrong values and other missing fields still fail.
 */
type Optional<T, K extends keyof T> = null extends T[K] ? true : K extends 'caller' ? true : false;
type Loose<T> = T extends readonly (infer U)[]
  ? Loose<U>[]
  : T extends object
    ? { [K in keyof T as Optional<T, K> extends true ? K : never]?: Loose<T[K]> } & {
        [K in keyof T as Optional<T, K> extends true ? never : K]: Loose<T[K]>;
      }
    : T;
/** A Messages request under anthropic-version 2023-06-01 (the adapter's): the SDK's 2026-10-21 types plus sampling. */
type AnthropicRequest = Partial<Anthropic.MessageCreateParamsNonStreaming> & {
  temperature?: number;
  top_p?: number;
  top_k?: number;
};
type GeminiRequest = Wire<{
  contents: Genai.Content[];
  systemInstruction?: Genai.Content;
  tools?: Genai.Tool[];
  toolConfig?: Genai.ToolConfig;
  safetySettings?: Genai.SafetySetting[];
  generationConfig?: Genai.GenerationConfig;
  cachedContent?: string;
}>;
type GeminiAnswer = Wire<Pick<Genai.GenerateContentResponse, 'candidates' | 'usageMetadata' | 'modelVersion' | 'responseId' | 'promptFeedback'>>;
type ChatPart = OpenAI.Chat.ChatCompletionContentPart & { cache_control?: Anthropic.CacheControlEphemeral };
type ChatMessage =
  | (Omit<OpenAI.Chat.ChatCompletionSystemMessageParam, 'content'> & { content: string | ChatPart[] })
  | (Omit<OpenAI.Chat.ChatCompletionUserMessageParam, 'content'> & { content: string | ChatPart[] })
  | OpenAI.Chat.ChatCompletionAssistantMessageParam
  | OpenAI.Chat.ChatCompletionToolMessageParam;
type ChatRequest = Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'messages'> & { messages: ChatMessage[] };
`;

type Provider = 'anthropic' | 'gemini';

/** The SDK type each fixture part must satisfy (undefined: not a provider or chat shape, not checked). */
function typeOf(provider: Provider, part: string, event?: string): string | undefined {
  if (part === 'chatRequest') return 'ChatRequest';
  if (provider === 'anthropic') {
    if (part === 'upstreamRequest') return 'AnthropicRequest';
    if (part === 'upstreamAnswer') return 'Loose<Anthropic.Message>';
    if (part === 'upstreamError') return 'Anthropic.ErrorResponse';
    if (part !== 'upstreamStream') return undefined;
    // A stream's error event carries no request id; `ping` is documented but not in the SDK's event union.
    if (event === 'error') return "Omit<Anthropic.ErrorResponse, 'request_id'>";
    return event === 'ping' ? "{ type: 'ping' }" : 'Loose<Anthropic.RawMessageStreamEvent>';
  }
  if (part === 'upstreamRequest') return 'Partial<GeminiRequest>';
  // An error event in a Gemini stream is Gemini's error body, which has no SDK type.
  if (part === 'upstreamAnswer' || (part === 'upstreamStream' && event !== 'error')) return 'GeminiAnswer';
  return undefined;
}

interface Check {
  readonly name: string;
  readonly text: string;
}

interface FixtureFile {
  readonly provider: Provider;
  readonly file: string;
  readonly fixture: Record<string, unknown>;
  readonly checks: Check[];
}

const fixtures: FixtureFile[] = (['anthropic', 'gemini'] as const).flatMap((provider) => {
  const dir = path.join(import.meta.dirname, provider, '__fixtures__');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((file) => {
      const fixture = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>;
      const checks: Check[] = [];
      const add = (name: string, value: unknown, type: string | undefined) => {
        if (type !== undefined)
          checks.push({
            name,
            text: `export const value = ${JSON.stringify(value, null, 1)} satisfies ${type};\n`,
          });
      };
      for (const part of ['chatRequest', 'upstreamRequest', 'upstreamAnswer'])
        if (fixture[part] !== undefined) add(part, fixture[part], typeOf(provider, part));
      const error = fixture.upstreamError as { body?: unknown } | undefined;
      if (error?.body !== undefined) add('upstreamError.body', error.body, typeOf(provider, 'upstreamError'));
      const stream = (fixture.upstreamStream as { event?: string; data: unknown }[] | undefined) ?? [];
      for (const [index, { event, data }] of stream.entries()) {
        const kind =
          event ?? (data !== null && typeof data === 'object' && 'error' in data ? 'error' : undefined);
        add(
          `upstreamStream[${index}]${kind ? ` (${kind})` : ''}`,
          data,
          typeOf(provider, 'upstreamStream', kind),
        );
      }
      return { provider, file, fixture, checks };
    });
});

/** Type-checks every check of every fixture in one program; the diagnostics of each, as tsc prints them. */
function typeCheck(): Map<string, string[]> {
  const root = path.join(import.meta.dirname, '__sdk_type_checks__');
  const files = new Map<string, { key: string; text: string }>();
  for (const { provider, file, checks } of fixtures)
    for (const [index, check] of checks.entries())
      files.set(path.join(root, `${provider}-${file}-${index}.ts`), {
        key: `${provider}/${file} ${check.name}`,
        text: PREAMBLE + check.text,
      });
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => {
    const own = files.get(path.resolve(name));
    return own
      ? ts.createSourceFile(name, own.text, language)
      : getSourceFile.call(host, name, language, ...rest);
  };
  host.fileExists = (name) => files.has(path.resolve(name)) || fileExists.call(host, name);
  host.readFile = (name) => files.get(path.resolve(name))?.text ?? readFile.call(host, name);
  const program = ts.createProgram([...files.keys()], options, host);
  const found = new Map<string, string[]>();
  for (const [name, { key }] of files) {
    const source = program.getSourceFile(name);
    const diagnostics = source ? ts.getPreEmitDiagnostics(program, source) : [];
    found.set(
      key,
      diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
    );
  }
  return found;
}

describe('fixtures against the SDK types', () => {
  const diagnostics = typeCheck();

  for (const { provider, file, fixture, checks } of fixtures) {
    it(`${provider}/${file}: says which SDK types it was checked against`, () => {
      const sdk = SDK_VERSIONS[provider];
      expect(fixture.checkedAgainstSdkTypes).toEqual(
        fixture.chatRequest === undefined ? [sdk] : [sdk, SDK_VERSIONS.openai],
      );
    });
    for (const check of checks)
      it(`${provider}/${file}: ${check.name} satisfies the SDK type`, () => {
        expect(diagnostics.get(`${provider}/${file} ${check.name}`)).toEqual([]);
      });
  }
});

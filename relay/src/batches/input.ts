/**
 * A batch's input file as OpenAI's Batch API reads it (https://platform.openai.com/docs/guides/batch): JSON Lines,
 * each `{ "custom_id", "method": "POST", "url", "body" }`, custom ids unique within the file, one endpoint and one
 * model for the whole file, at most 50,000 requests and 200 MB. The problems are reported per line with the codes
 * a batch's `errors.data` carries, so a refused upload and a failed batch say the same thing.
 */

/** The endpoints a batch line may call (OpenAI's list, and Anthropic's own for a Claude model). */
export const BATCH_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/completions',
  '/v1/responses',
  '/v1/moderations',
] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export const isBatchEndpoint = (value: unknown): value is BatchEndpoint =>
  typeof value === 'string' && (BATCH_ENDPOINTS as readonly string[]).includes(value);

export const MAX_BATCH_REQUESTS = 50_000;
export const MAX_BATCH_INPUT_BYTES = 200 * 1024 * 1024;

export interface BatchLine {
  readonly customId: string;
  readonly url: BatchEndpoint;
  readonly body: Readonly<Record<string, unknown>>;
}

/** One problem of the file, as OpenAI's `batch.errors.data[]`. */
export interface InputProblem {
  readonly code: string;
  readonly message: string;
  /** 1-based, absent for the file as a whole. */
  readonly line?: number;
  readonly param?: string;
}

export type ParsedInput =
  | {
      readonly ok: true;
      readonly lines: readonly BatchLine[];
      readonly url: BatchEndpoint;
      readonly model: string;
    }
  | { readonly ok: false; readonly problems: readonly InputProblem[] };

/** Reporting stops here: a file broken on every line says so in a few lines. */
const MAX_PROBLEMS = 20;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads and checks a batch input file. */
export function parseBatchInput(content: Buffer | string): ParsedInput {
  const text = typeof content === 'string' ? content : content.toString('utf8');
  if (Buffer.byteLength(text) > MAX_BATCH_INPUT_BYTES)
    return fail({ code: 'file_too_large', message: `a batch input file may be at most 200 MB` });
  const problems: InputProblem[] = [];
  const lines: BatchLine[] = [];
  const ids = new Set<string>();
  let url: BatchEndpoint | undefined;
  let model: string | undefined;
  const rows = text.split('\n');
  for (let index = 0; index < rows.length && problems.length < MAX_PROBLEMS; index += 1) {
    const raw = rows[index]?.trim() ?? '';
    if (raw === '') continue;
    const line = index + 1;
    const problem = (code: string, message: string, param?: string) =>
      problems.push({ code, message, line, ...(param ? { param } : {}) });
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problem('invalid_json_line', 'this line is not valid JSON');
      continue;
    }
    if (!isObject(value)) {
      problem('invalid_json_line', 'each line must be a JSON object');
      continue;
    }
    const { custom_id: customId, method, url: lineUrl, body } = value;
    if (typeof customId !== 'string' || customId === '') {
      problem('missing_required_parameter', 'custom_id must be a non-empty string', 'custom_id');
      continue;
    }
    if (ids.has(customId)) {
      problem(
        'duplicate_custom_id',
        `the custom_id ${JSON.stringify(customId)} is used on an earlier line`,
        'custom_id',
      );
      continue;
    }
    ids.add(customId);
    if (method !== 'POST') {
      problem('invalid_method', 'method must be "POST"', 'method');
      continue;
    }
    if (!isBatchEndpoint(lineUrl)) {
      problem('invalid_url', `url must be one of ${BATCH_ENDPOINTS.join(', ')}`, 'url');
      continue;
    }
    if (url !== undefined && lineUrl !== url) {
      problem('mismatched_url', `every line must call the same endpoint (${url})`, 'url');
      continue;
    }
    if (!isObject(body)) {
      problem('missing_required_parameter', 'body must be a JSON object', 'body');
      continue;
    }
    if (typeof body.model !== 'string' || body.model === '') {
      problem('missing_required_parameter', 'body.model must be a non-empty string', 'body.model');
      continue;
    }
    if (model !== undefined && body.model !== model) {
      problem('mismatched_model', `every line must use the same model (${model})`, 'body.model');
      continue;
    }
    if (body.stream === true) {
      problem('invalid_request', 'a batch line cannot stream', 'body.stream');
      continue;
    }
    url = lineUrl;
    model = body.model;
    lines.push({ customId, url: lineUrl, body });
  }
  if (problems.length > 0) return fail(...problems);
  if (lines.length === 0 || url === undefined || model === undefined)
    return fail({ code: 'empty_file', message: 'the batch input file has no requests' });
  if (lines.length > MAX_BATCH_REQUESTS)
    return fail({
      code: 'too_many_requests',
      message: `a batch may hold at most ${MAX_BATCH_REQUESTS} requests`,
    });
  return { ok: true, lines, url, model };
}

const fail = (...problems: InputProblem[]): ParsedInput => ({ ok: false, problems });

/** The problems as one sentence for an error message: `line 3: custom_id must be ...; line 7: ...`. */
export const describeProblems = (problems: readonly InputProblem[]): string =>
  problems.map((p) => (p.line === undefined ? p.message : `line ${p.line}: ${p.message}`)).join('; ');

/**
 * OpenAI's Files API (https://platform.openai.com/docs/api-reference/files): upload (multipart `file` + `purpose`),
 * list, retrieve, content and delete, each scoped to the token's user: another user's file is a 404, as a file that
 * never existed. The bytes are kept by core's file store (the database, or an S3-compatible object store).
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { files, type StoredFile } from '@turnpike/core/db/schema/index';
import { type FileStore, openFileStore } from '@turnpike/core/files/store';
import { and, asc, desc, eq, gt, lt } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeProblems, MAX_BATCH_INPUT_BYTES, parseBatchInput } from '../batches/input.ts';
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import { openAiChatIngress } from '../formats/openai/chat-ingress.ts';
import { authenticateRequest } from '../pipeline/authenticate-request.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { sendError } from '../pipeline/respond.ts';
import type { Caller } from '../state/auth-cache.ts';

/** The purposes a client may upload with (OpenAI's list); `batch_output` is the gateway's own, for batch results. */
export const UPLOAD_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
export const OUTPUT_PURPOSE = 'batch_output';

/** OpenAI's limit of one file: 512 MB. */
export const MAX_FILE_BYTES = 512 * 1024 * 1024;

const DEFAULT_LIST_LIMIT = 10_000;
const MAX_LIST_LIMIT = 10_000;

const stores = new WeakMap<RelayContext, FileStore>();

/** The relay's file store (one per relay). */
export function fileStoreOf(ctx: RelayContext): FileStore {
  let store = stores.get(ctx);
  if (!store) {
    store = openFileStore(ctx.deps.config, ctx.deps.db);
    stores.set(ctx, store);
  }
  return store;
}

export const newFileId = (): string => `file-${randomBytes(12).toString('hex')}`;

/** OpenAI's file object. */
export function fileObjectOf(row: StoredFile) {
  return {
    id: row.id,
    object: 'file' as const,
    bytes: row.bytes,
    created_at: row.createdAt,
    expires_at: row.expiresAt > 0 ? row.expiresAt : null,
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed' as const,
    status_details: null,
  };
}

export const invalidRequest = (
  message: string,
  code: string | null = null,
  param: string | null = null,
): RelayError => ({
  ...localError(400, code ?? 'invalid_request', message, 'invalid_request_error'),
  code,
  param,
});

export const notFound = (what: string, id: string): RelayError =>
  localError(404, 'not_found', `No such ${what}: ${id}`, 'invalid_request_error');

/** The caller of a request, or undefined after answering the refusal. */
export async function callerOf(
  ctx: RelayContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Caller | undefined> {
  const auth = await authenticateRequest(ctx, request);
  if (auth.ok) return auth.caller;
  sendError(request, reply, auth.error, openAiChatIngress);
  return undefined;
}

/**
 * Whether a client's id can name a row of the gateway (`file-…`, `batch_…`, `ftjob-…`): anything else is a 404
 * without asking the database (a NUL or a lone surrogate is not even text Postgres accepts).
 */
export const isGatewayId = (id: unknown): id is string =>
  typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id);

/** A file row of the user, or undefined. */
export async function ownFile(
  ctx: RelayContext,
  userId: number,
  id: string,
): Promise<StoredFile | undefined> {
  if (!isGatewayId(id)) return undefined;
  const [row] = await ctx.deps.db
    .select()
    .from(files)
    .where(and(eq(files.id, id), eq(files.userId, userId)));
  return row;
}

/** Stores bytes as a new file of the user. */
export async function storeFile(
  ctx: RelayContext,
  owner: { userId: number; tokenId: number },
  file: { purpose: string; filename: string; content: Buffer; expiresAt?: number },
): Promise<StoredFile> {
  const store = fileStoreOf(ctx);
  const id = newFileId();
  await store.put(id, file.content);
  const [row] = await ctx.deps.db
    .insert(files)
    .values({
      id,
      userId: owner.userId,
      tokenId: owner.tokenId,
      purpose: file.purpose,
      filename: file.filename.slice(0, 255),
      bytes: file.content.length,
      createdAt: Math.floor(Date.now() / 1000),
      expiresAt: file.expiresAt ?? 0,
      storage: store.kind,
    })
    .returning();
  if (!row) throw new Error('the file row was not written');
  return row;
}

/** Reads a request body up to `limit` bytes; undefined when it is larger. */
async function readBody(source: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    const piece = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += piece.length;
    if (size > limit) {
      source.destroy();
      return undefined;
    }
    chunks.push(piece);
  }
  return Buffer.concat(chunks);
}

/** Multipart field `expires_after[anchor]` / `expires_after[seconds]`: seconds after creation, 1 hour to 30 days. */
function expiryOf(form: FormData, now: number): number | RelayError {
  const anchor = form.get('expires_after[anchor]');
  const seconds = form.get('expires_after[seconds]');
  if (anchor === null && seconds === null) return 0;
  const value = Number(seconds);
  if (anchor !== 'created_at' || !Number.isInteger(value) || value < 3600 || value > 2_592_000)
    return invalidRequest(
      'expires_after must be { anchor: "created_at", seconds: 3600 to 2592000 }',
      'invalid_value',
      'expires_after',
    );
  return now + value;
}

async function createFile(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const contentType = request.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType))
    return sendError(
      request,
      reply,
      invalidRequest('the body must be multipart/form-data with a file and a purpose'),
      openAiChatIngress,
    );
  const body = await readBody(request.body as Readable, MAX_FILE_BYTES + 64 * 1024);
  if (!body)
    return sendError(
      request,
      reply,
      localError(413, 'file_too_large', 'a file may be at most 512 MB', 'invalid_request_error'),
      openAiChatIngress,
    );
  let form: FormData;
  try {
    form = await new Response(
      new Blob([new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.length)]),
      { headers: { 'content-type': contentType } },
    ).formData();
  } catch {
    return sendError(
      request,
      reply,
      invalidRequest('the multipart body could not be read'),
      openAiChatIngress,
    );
  }
  const purpose = form.get('purpose');
  if (typeof purpose !== 'string' || !(UPLOAD_PURPOSES as readonly string[]).includes(purpose))
    return sendError(
      request,
      reply,
      invalidRequest(`purpose must be one of ${UPLOAD_PURPOSES.join(', ')}`, 'invalid_value', 'purpose'),
      openAiChatIngress,
    );
  const file = form.get('file');
  if (file === null || typeof file === 'string')
    return sendError(
      request,
      reply,
      invalidRequest('a file is required', 'missing_required_parameter', 'file'),
      openAiChatIngress,
    );
  const content = Buffer.from(await file.arrayBuffer());
  if (content.length > MAX_FILE_BYTES)
    return sendError(
      request,
      reply,
      localError(413, 'file_too_large', 'a file may be at most 512 MB', 'invalid_request_error'),
      openAiChatIngress,
    );
  const problem = checkContent(purpose, file.name, content);
  if (problem) return sendError(request, reply, problem, openAiChatIngress);
  const now = Math.floor(Date.now() / 1000);
  const expiresAt = expiryOf(form, now);
  if (typeof expiresAt !== 'number') return sendError(request, reply, expiresAt, openAiChatIngress);
  const row = await storeFile(
    ctx,
    { userId: caller.user.id, tokenId: caller.token.id },
    { purpose, filename: file.name || 'file', content, expiresAt },
  );
  return reply.code(200).send(fileObjectOf(row));
}

/** What OpenAI checks of a file's content at upload: batch input and fine-tuning data are JSON Lines. */
function checkContent(purpose: string, filename: string, content: Buffer): RelayError | undefined {
  if (purpose === 'batch') {
    if (!filename.endsWith('.jsonl'))
      return invalidRequest('a batch input file must be a .jsonl file', 'invalid_file_format', 'file');
    if (content.length > MAX_BATCH_INPUT_BYTES)
      return localError(
        413,
        'file_too_large',
        'a batch input file may be at most 200 MB',
        'invalid_request_error',
      );
    const parsed = parseBatchInput(content);
    if (!parsed.ok)
      return invalidRequest(
        `the batch input file is not valid: ${describeProblems(parsed.problems)}`,
        parsed.problems[0]?.code ?? 'invalid_file_format',
        'file',
      );
  }
  if (purpose === 'fine-tune') {
    const lines = content.toString('utf8').split('\n');
    for (let index = 0; index < lines.length; index += 1) {
      const raw = lines[index]?.trim() ?? '';
      if (raw === '') continue;
      try {
        const value = JSON.parse(raw) as unknown;
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          throw new Error('not an object');
      } catch {
        return invalidRequest(
          `the fine-tuning file is not valid JSON Lines: line ${index + 1} is not a JSON object`,
          'invalid_file_format',
          'file',
        );
      }
    }
  }
  return undefined;
}

const fileIdOf = (request: FastifyRequest): string => (request.params as { id: string }).id;

async function listFiles(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const query = request.query as Record<string, string | undefined>;
  const limit = listLimitOf(query, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
  const ascending = query.order === 'asc';
  const conditions = [eq(files.userId, caller.user.id)];
  if (query.purpose) conditions.push(eq(files.purpose, query.purpose));
  if (query.after) {
    const after = await ownFile(ctx, caller.user.id, query.after);
    if (after)
      conditions.push(
        ascending ? gt(files.createdAt, after.createdAt) : lt(files.createdAt, after.createdAt),
      );
  }
  const rows = await ctx.deps.db
    .select()
    .from(files)
    .where(and(...conditions))
    .orderBy(
      ascending ? asc(files.createdAt) : desc(files.createdAt),
      ascending ? asc(files.id) : desc(files.id),
    )
    .limit(limit + 1);
  return reply.send(openAiPage(rows, limit, fileObjectOf));
}

/** A list's `limit` query parameter as OpenAI reads it: `fallback` when absent, at least 1, at most `max`. */
export const listLimitOf = (query: Record<string, string | undefined>, fallback = 20, max = 100): number =>
  Math.min(Math.max(Number(query.limit) || fallback, 1), max);

/** OpenAI's cursor page of a list read with one row past `limit` (`has_more` when that row came). */
export function openAiPage<Row, Item extends { id: string }>(
  rows: readonly Row[],
  limit: number,
  toItem: (row: Row) => Item,
) {
  const data = rows.slice(0, limit).map(toItem);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: rows.length > limit,
  };
}

async function retrieveFile(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const row = await ownFile(ctx, caller.user.id, fileIdOf(request));
  if (!row) return sendError(request, reply, notFound('file', fileIdOf(request)), openAiChatIngress);
  return reply.send(fileObjectOf(row));
}

async function fileContent(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const row = await ownFile(ctx, caller.user.id, fileIdOf(request));
  const content = row && (await fileStoreOf(ctx).get(row.id));
  if (!row || !content)
    return sendError(request, reply, notFound('file', fileIdOf(request)), openAiChatIngress);
  return reply
    .header('content-type', 'application/octet-stream')
    .header('content-disposition', `attachment; filename="${row.filename.replace(/["\\\r\n]/g, '_')}"`)
    .send(content);
}

async function deleteFile(ctx: RelayContext, request: FastifyRequest, reply: FastifyReply) {
  const caller = await callerOf(ctx, request, reply);
  if (!caller) return reply;
  const id = fileIdOf(request);
  if (!isGatewayId(id))
    return sendError(request, reply, notFound('file', String(id).slice(0, 64)), openAiChatIngress);
  const deleted = await ctx.deps.db
    .delete(files)
    .where(and(eq(files.id, id), eq(files.userId, caller.user.id)))
    .returning({ id: files.id });
  if (deleted.length === 0) return sendError(request, reply, notFound('file', id), openAiChatIngress);
  await fileStoreOf(ctx).delete(id);
  return reply.send({ id, object: 'file', deleted: true });
}

/** The file routes, under the `/v1` prefix of `scope`. */
export function registerFileRoutes(scope: FastifyInstance, ctx: RelayContext): void {
  scope.post('/v1/files', (request, reply) => createFile(ctx, request, reply));
  scope.get('/v1/files', (request, reply) => listFiles(ctx, request, reply));
  scope.get('/v1/files/:id', (request, reply) => retrieveFile(ctx, request, reply));
  scope.get('/v1/files/:id/content', (request, reply) => fileContent(ctx, request, reply));
  scope.delete('/v1/files/:id', (request, reply) => deleteFile(ctx, request, reply));
}

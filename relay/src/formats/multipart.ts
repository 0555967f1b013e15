/**
 * Multipart uploads (image edits, audio transcriptions and translations) without holding them in memory: the
 * body is spooled to a temporary file as it arrives while a small scanner reads the form's text fields (`model`,
 * `prompt`, `n`, `size`, ...) and notes each file part's size. Each attempt then streams the file to the upstream
 * (so a retry on another channel sends the same bytes), with the `model` field's value swapped for the mapped
 * upstream model by splicing byte ranges, never by re-encoding the form. Memory per upload: one chunk plus the
 * text fields (each capped at {@link MAX_FIELD_BYTES}).
 */

import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { MultipartBody } from '../contract.ts';

/** Text fields longer than this are cut (their bytes still go upstream untouched). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Largest upload accepted; OpenAI's own limits are 25 MB (audio) and 50 MB (images). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

export interface FormField {
  readonly value: string;
  /** Byte range of the value in the body. */
  readonly start: number;
  readonly end: number;
}

export interface FormFile {
  readonly name: string;
  readonly filename: string;
  readonly size: number;
}

export interface SpooledUpload extends MultipartBody {
  readonly fields: ReadonlyMap<string, FormField>;
  readonly files: readonly FormFile[];
  readonly size: number;
  /** Deletes the spool file. */
  dispose(): Promise<void>;
}

export class UploadError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The boundary of a `multipart/form-data` content type, or undefined. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** Incremental multipart/form-data reader: text fields with their byte ranges, and file sizes. */
export function createFormScanner(boundary: string) {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields = new Map<string, FormField>();
  const files: FormFile[] = [];
  // A virtual CRLF in front lets the first delimiter match like the others.
  let buf: Buffer = Buffer.from('\r\n');
  let bufStart = -2;
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done' = 'preamble';
  let part:
    | { name: string; filename: string | undefined; start: number; size: number; chunks: Buffer[] }
    | undefined;

  const drop = (n: number) => {
    buf = buf.subarray(n);
    bufStart += n;
  };
  const take = (n: number) => {
    if (part && n > 0) {
      if (part.filename === undefined && part.size < MAX_FIELD_BYTES)
        part.chunks.push(Buffer.from(buf.subarray(0, Math.min(n, MAX_FIELD_BYTES - part.size))));
      part.size += n;
    }
    drop(n);
  };
  const endPart = () => {
    if (!part) return;
    if (part.filename === undefined) {
      if (!fields.has(part.name))
        fields.set(part.name, {
          value: Buffer.concat(part.chunks).toString('utf8'),
          start: part.start,
          end: part.start + part.size,
        });
    } else {
      files.push({ name: part.name, filename: part.filename, size: part.size });
    }
    part = undefined;
  };

  const run = () => {
    for (;;) {
      if (state === 'done') {
        drop(buf.length);
        return;
      }
      if (state === 'preamble' || state === 'body') {
        const index = buf.indexOf(delimiter);
        if (index === -1) {
          const safe = buf.length - (delimiter.length - 1);
          if (safe > 0) {
            if (state === 'body') take(safe);
            else drop(safe);
          }
          return;
        }
        if (state === 'body') {
          take(index);
          endPart();
        } else {
          drop(index);
        }
        drop(delimiter.length);
        state = 'after-delimiter';
      } else if (state === 'after-delimiter') {
        if (buf.length < 2) return;
        const next = buf.subarray(0, 2).toString('latin1');
        drop(2);
        state = next === '--' ? 'done' : 'headers';
      } else {
        const index = buf.indexOf(CRLF2);
        if (index === -1) {
          if (buf.length > 16 * 1024) throw new UploadError(400, 'a multipart part has oversized headers');
          return;
        }
        const headers = buf.subarray(0, index).toString('utf8');
        drop(index + 4);
        const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
        const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? '';
        const filename = /\bfilename\*?="?([^";]*)"?/i.exec(disposition)?.[1];
        part = { name, filename, start: bufStart, size: 0, chunks: [] };
        state = 'body';
      }
    }
  };

  return {
    push(chunk: Buffer) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      run();
    },
    /** Whether the closing delimiter was seen. */
    get isComplete() {
      return state === 'done';
    },
    fields,
    files,
  };
}

const SPOOL_PREFIX = 'turnpike-upload-';

/**
 * Deletes spool files older than `olderThanMs` that a crashed process left in `dir` (a live upload's file lives for
 * one request; the default hour is far past any request timeout). Answers how many were removed.
 */
export async function sweepStaleUploads(
  dir = tmpdir(),
  olderThanMs = 60 * 60 * 1000,
  now = Date.now(),
): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(SPOOL_PREFIX)) continue;
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile() || now - info.mtimeMs < olderThanMs) continue;
    await rm(file, { force: true });
    removed += 1;
  }
  return removed;
}

/** Reads `source` into a spool file; the caller must `dispose()` the result. */
export async function spoolUpload(
  source: AsyncIterable<Buffer | Uint8Array>,
  contentType: string,
  maxBytes = MAX_UPLOAD_BYTES,
): Promise<SpooledUpload> {
  const boundary = boundaryOf(contentType);
  if (!boundary) throw new UploadError(400, 'the body must be multipart/form-data with a boundary');
  const file = path.join(tmpdir(), `${SPOOL_PREFIX}${randomBytes(12).toString('hex')}`);
  const dispose = () => rm(file, { force: true });
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  const scanner = createFormScanner(boundary);
  let size = 0;
  try {
    for await (const piece of source) {
      const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece);
      size += chunk.length;
      if (size > maxBytes) throw new UploadError(413, `the upload is larger than ${maxBytes} bytes`);
      scanner.push(chunk);
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
    }
    out.end();
    await finished(out);
  } catch (error) {
    out.destroy();
    await dispose();
    throw error;
  }
  if (!scanner.isComplete) {
    await dispose();
    throw new UploadError(400, 'the multipart body is incomplete');
  }
  const { fields, files } = scanner;
  return {
    contentType,
    fields,
    files,
    size,
    dispose,
    open(model) {
      const field = fields.get('model');
      if (model === undefined || field?.value === model)
        return { stream: createReadStream(file), length: size };
      const value = Buffer.from(model, 'utf8');
      if (!field) {
        // No model field: one is put first (the spec default the client relied on, made explicit upstream).
        const head = Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`,
          'utf8',
        );
        return { stream: concat([head, { start: 0, end: size }], file), length: head.length + size };
      }
      return {
        stream: concat([{ start: 0, end: field.start }, value, { start: field.end, end: size }], file),
        length: field.start + value.length + (size - field.end),
      };
    },
  };
}

/** Pieces of the spool file (byte ranges, end exclusive) and literal buffers, as one stream. */
function concat(pieces: (Buffer | { start: number; end: number })[], file: string): Readable {
  async function* generate() {
    for (const piece of pieces) {
      if (Buffer.isBuffer(piece)) {
        yield piece;
      } else if (piece.end > piece.start) {
        yield* createReadStream(file, { start: piece.start, end: piece.end - 1 });
      }
    }
  }
  return Readable.from(generate(), { objectMode: false });
}

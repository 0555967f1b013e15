import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { createFormScanner, spoolUpload, sweepStaleUploads, UploadError } from './multipart.ts';

async function encode(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    body: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type')!,
  };
}

function sampleForm(fileBytes: Buffer<ArrayBuffer>): FormData {
  const form = new FormData();
  form.append('file', new Blob([fileBytes], { type: 'audio/mpeg' }), 'speech.mp3');
  form.append('model', 'whisper-1');
  form.append('prompt', 'ünïcödé prompt\r\nwith lines');
  return form;
}

function bytes(n: number): Buffer<ArrayBuffer> {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += 1) out[i] = (i * 13 + 5) % 256;
  return out;
}

async function* chunked(body: Buffer, size: number) {
  for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
}

describe('multipart form scanner', () => {
  it('reads text fields with their byte ranges and file sizes, whatever the chunking', async () => {
    const file = bytes(5000);
    const { body, contentType } = await encode(sampleForm(file));
    const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
    for (const size of [1, 7, 64, 4096, body.length]) {
      const scanner = createFormScanner(boundary);
      for await (const chunk of chunked(body, size)) scanner.push(Buffer.from(chunk));
      expect(scanner.isComplete).toBe(true);
      const model = scanner.fields.get('model')!;
      expect(model.value).toBe('whisper-1');
      expect(body.subarray(model.start, model.end).toString()).toBe('whisper-1');
      expect(scanner.fields.get('prompt')!.value).toBe('ünïcödé prompt\r\nwith lines');
      expect(scanner.files).toEqual([{ name: 'file', filename: 'speech.mp3', size: 5000 }]);
    }
  });
});

describe('spooled uploads', () => {
  it('replays the body with the model swapped and the file intact', async () => {
    const file = bytes(200_000);
    const { body, contentType } = await encode(sampleForm(file));
    const upload = await spoolUpload(chunked(body, 1000), contentType);
    try {
      expect(upload.size).toBe(body.length);
      const same = upload.open('whisper-1');
      expect(same.length).toBe(body.length);
      expect(Buffer.from(await text(same.stream), 'utf8').length).toBeGreaterThan(0);

      const mapped = upload.open('whisper-large-v3');
      const form = await new Response(mapped.stream as unknown as ReadableStream, {
        headers: { 'content-type': contentType },
      }).formData();
      expect(mapped.length).toBe(body.length + 'whisper-large-v3'.length - 'whisper-1'.length);
      expect(form.get('model')).toBe('whisper-large-v3');
      expect(form.get('prompt')).toBe('ünïcödé prompt\r\nwith lines');
      const sent = Buffer.from(await (form.get('file') as Blob).arrayBuffer());
      expect(sent.equals(file)).toBe(true);
    } finally {
      await upload.dispose();
    }
  });

  it('adds a model field when the form has none', async () => {
    const form = new FormData();
    form.append('file', new Blob([bytes(100)]), 'a.wav');
    const { body, contentType } = await encode(form);
    const upload = await spoolUpload(chunked(body, 10), contentType);
    try {
      const opened = upload.open('whisper-1');
      const parsed = await new Response(opened.stream as unknown as ReadableStream, {
        headers: { 'content-type': contentType },
      }).formData();
      expect(parsed.get('model')).toBe('whisper-1');
      expect((parsed.get('file') as Blob).size).toBe(100);
    } finally {
      await upload.dispose();
    }
  });

  it('refuses an upload over the limit and a truncated body', async () => {
    const { body, contentType } = await encode(sampleForm(bytes(10_000)));
    await expect(spoolUpload(chunked(body, 1000), contentType, 5000)).rejects.toMatchObject({ status: 413 });
    await expect(spoolUpload(chunked(body.subarray(0, 3000), 1000), contentType)).rejects.toBeInstanceOf(
      UploadError,
    );
  });
});

describe('sweepStaleUploads', () => {
  it('removes the spools a crash left behind, keeping fresh ones and other files', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnpike-sweep-'));
    try {
      const now = Date.now();
      const twoHoursAgo = new Date(now - 2 * 60 * 60 * 1000);
      writeFileSync(path.join(dir, 'turnpike-upload-old'), 'x');
      utimesSync(path.join(dir, 'turnpike-upload-old'), twoHoursAgo, twoHoursAgo);
      writeFileSync(path.join(dir, 'turnpike-upload-live'), 'x');
      writeFileSync(path.join(dir, 'someone-else-old'), 'x');
      utimesSync(path.join(dir, 'someone-else-old'), twoHoursAgo, twoHoursAgo);

      expect(await sweepStaleUploads(dir, 60 * 60 * 1000, now)).toBe(1);
      expect(readdirSync(dir).sort()).toEqual(['someone-else-old', 'turnpike-upload-live']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 0 for a folder that does not exist', async () => {
    expect(await sweepStaleUploads(path.join(tmpdir(), 'turnpike-no-such-folder-1234'))).toBe(0);
  });
});

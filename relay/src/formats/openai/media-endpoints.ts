/**
 * Image and audio endpoints (OpenAI API reference: /images/generations, /images/edits, /audio/speech,
 * /audio/transcriptions, /audio/translations).
 *
 * Billing:
 * - images: per image, reference §5.4 with its bug fixed — `(ModelPrice or 0.0025 × ModelRatio) × size ratio ×
 *   quality ratio × n × group ratio`, one amount for the balance check, the reservation and the charge
 *   (`imageQuota` in core);
 * - speech: the characters of `input` are the prompt tokens (reference §4.6);
 * - transcription and translation: the answer's `usage` when it has one (token usage of gpt-4o-transcribe, or
 *   `{type:"duration", seconds}`), else its `duration` (verbose_json), converted as the reference does:
 *   `ceil(seconds) × 1000 / 60` tokens per audio minute; else an estimate from the upload's size assuming
 *   128 kbit/s audio ({@link AUDIO_BYTES_PER_SECOND}), at least one second. The same estimate is reserved.
 */

import { isRecord, type Json } from '@turnpike/core/json';
import type {
  EndpointSpec,
  NormalisedUsage,
  PreparedRequest,
  RelayError,
  RelayRequest,
} from '../../contract.ts';
import { invalidRequest, localError } from '../../errors.ts';
import { countTextTokens, encodingForModel } from '../../metering/tokens.ts';
import { EMPTY_USAGE, normaliseOpenAiUsage } from '../../metering/usage.ts';
import { type SpooledUpload, spoolUpload, UploadError } from '../multipart.ts';
import { readJsonBody } from './text-endpoints.ts';

export const DEFAULT_IMAGE_MODEL = 'dall-e-2';
export const DEFAULT_SPEECH_MODEL = 'tts-1';
export const DEFAULT_TRANSCRIPTION_MODEL = 'whisper-1';
/** 128 kbit/s: what an upload's duration is estimated from when the answer does not say. */
export const AUDIO_BYTES_PER_SECOND = 16_000;

const IMAGE_SIZES: Readonly<Record<string, readonly string[]>> = {
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
  'dall-e-3': ['1024x1024', '1024x1792', '1792x1024'],
};

/** Audio seconds as billed tokens: `ceil(seconds) × 1000 / 60` (reference §4.6), at least 1. */
export const audioSecondsToTokens = (seconds: number): number =>
  Math.max(1, Math.round((Math.ceil(seconds) * 1000) / 60));

function readImageRequest(
  fields: { model: string; prompt: unknown; n: unknown; size: unknown; quality: unknown },
  isEdit: boolean,
): { n: number; size: string | undefined; quality: string | undefined } | RelayError {
  if (typeof fields.prompt !== 'string' || fields.prompt.trim() === '')
    return invalidRequest('prompt is required');
  const n = fields.n === undefined || fields.n === null || fields.n === '' ? 1 : Number(fields.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return invalidRequest('n must be a whole number from 1 to 10');
  const size = typeof fields.size === 'string' && fields.size !== '' ? fields.size : undefined;
  if (size !== undefined) {
    if (size.includes('×')) return invalidRequest('size must be written with a plain x, like 1024x1024');
    const allowed = isEdit ? undefined : IMAGE_SIZES[fields.model];
    if (allowed && !allowed.includes(size))
      return invalidRequest(`size must be one of ${allowed.join(', ')} for ${fields.model}`);
  }
  const quality = typeof fields.quality === 'string' && fields.quality !== '' ? fields.quality : undefined;
  return { n, size, quality };
}

const imageNote = (size: string | undefined, quality: string | undefined, n: number) =>
  `size ${size ?? 'default'}, quality ${quality ?? 'standard'}, images ${n}`;

/** gpt-image-1 reports token usage; it is logged (the bill stays the per-image price). */
const imageUsage = (answer: Json): NormalisedUsage | undefined => normaliseOpenAiUsage(answer.usage);

export const imageGenerationSpec: EndpointSpec = {
  endpoint: 'image-generation',
  prepare(request) {
    const read = readJsonBody(request.body, DEFAULT_IMAGE_MODEL);
    if ('status' in read) return read;
    const { body, model } = read;
    if (body.stream === true) return invalidRequest('streamed image generation is not supported');
    const image = readImageRequest({ model, ...pick(body) }, false);
    if ('status' in image) return image;
    return {
      model,
      payload: { kind: 'json', body: { ...body, model } },
      isStream: false,
      promptTokens: 0,
      promptTexts: [body.prompt as string],
      image: { model, ...image },
      note: imageNote(image.size, image.quality, image.n),
    };
  },
  answer: 'json',
  usageOf: imageUsage,
};

const pick = (source: Record<string, unknown>) => ({
  prompt: source.prompt,
  n: source.n,
  size: source.size,
  quality: source.quality,
});

const uploadError = (error: unknown): RelayError | undefined =>
  error instanceof UploadError
    ? localError(error.status, 'invalid_request', error.message, 'invalid_request_error')
    : undefined;

/** Spools a multipart request (the relay's content-type parser hands the body over unread). */
async function readUpload(request: RelayRequest): Promise<SpooledUpload | RelayError> {
  const contentType = request.headers['content-type'];
  const body = request.body as AsyncIterable<Buffer> | undefined;
  if (
    !contentType?.toLowerCase().startsWith('multipart/form-data') ||
    !body ||
    !(Symbol.asyncIterator in body)
  )
    return invalidRequest('the request must be multipart/form-data');
  try {
    return await spoolUpload(body, contentType);
  } catch (error) {
    const known = uploadError(error);
    if (known) return known;
    throw error;
  }
}

const fieldValue = (upload: SpooledUpload, name: string): string | undefined =>
  upload.fields.get(name)?.value;

export const imageEditSpec: EndpointSpec = {
  endpoint: 'image-edit',
  async prepare(request) {
    const upload = await readUpload(request);
    if ('status' in upload) return upload;
    const model = fieldValue(upload, 'model') || DEFAULT_IMAGE_MODEL;
    const image = readImageRequest(
      {
        model,
        prompt: fieldValue(upload, 'prompt'),
        n: fieldValue(upload, 'n'),
        size: fieldValue(upload, 'size'),
        quality: fieldValue(upload, 'quality'),
      },
      true,
    );
    const hasImage = upload.files.some((file) => file.name === 'image' || file.name === 'image[]');
    const problem = 'status' in image ? image : hasImage ? undefined : invalidRequest('image is required');
    if (problem || 'status' in image) {
      await upload.dispose();
      return problem as RelayError;
    }
    return {
      model,
      payload: { kind: 'multipart', body: upload },
      isStream: false,
      promptTokens: 0,
      promptTexts: [fieldValue(upload, 'prompt') ?? ''],
      image: { model, ...image },
      note: imageNote(image.size, image.quality, image.n),
      dispose: upload.dispose,
    };
  },
  answer: 'json',
  usageOf: imageUsage,
};

export const speechSpec: EndpointSpec = {
  endpoint: 'speech',
  prepare(request) {
    const read = readJsonBody(request.body, DEFAULT_SPEECH_MODEL);
    if ('status' in read) return read;
    const { body, model } = read;
    if (typeof body.input !== 'string' || body.input === '') return invalidRequest('input is required');
    if (body.stream_format === 'sse')
      return invalidRequest('stream_format "sse" is not supported; use "audio"');
    const characters = [...body.input].length;
    return {
      model,
      payload: { kind: 'json', body: { ...body, model } },
      isStream: false,
      promptTokens: characters,
      // The bill is known before the call: reserve exactly it.
      reserveTokens: characters,
      promptTexts: [body.input],
      note: `speech of ${characters} characters`,
    };
  },
  answer: 'binary',
};

/** Usage of a transcription answer (see the file comment); undefined when it says nothing. */
export function transcriptionUsage(answer: Json): { usage: NormalisedUsage; note: string } | undefined {
  const usage = answer.usage;
  if (isRecord(usage)) {
    if (usage.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds > 0)
      return {
        usage: { ...EMPTY_USAGE, promptTokens: audioSecondsToTokens(usage.seconds) },
        note: `audio of ${usage.seconds} s`,
      };
    const tokens = normaliseOpenAiUsage(usage);
    if (tokens && tokens.promptTokens + tokens.completionTokens > 0)
      return { usage: tokens, note: 'token usage' };
  }
  if (typeof answer.duration === 'number' && answer.duration > 0)
    return {
      usage: { ...EMPTY_USAGE, promptTokens: audioSecondsToTokens(answer.duration) },
      note: `audio of ${answer.duration} s`,
    };
  return undefined;
}

/** Seconds of audio guessed from the upload's size (128 kbit/s), at least 1. */
export const estimateAudioSeconds = (bytes: number): number =>
  Math.max(1, Math.ceil(bytes / AUDIO_BYTES_PER_SECOND));

function transcriptionSpec(endpoint: 'transcription' | 'translation'): EndpointSpec {
  return {
    endpoint,
    async prepare(request): Promise<PreparedRequest | RelayError> {
      const upload = await readUpload(request);
      if ('status' in upload) return upload;
      const file = upload.files.find((f) => f.name === 'file');
      if (!file) {
        await upload.dispose();
        return invalidRequest('file is required');
      }
      if (fieldValue(upload, 'stream') === 'true') {
        await upload.dispose();
        return invalidRequest('streamed transcription is not supported');
      }
      const model = fieldValue(upload, 'model') || DEFAULT_TRANSCRIPTION_MODEL;
      const seconds = estimateAudioSeconds(file.size);
      const estimate = audioSecondsToTokens(seconds);
      const prompt = fieldValue(upload, 'prompt');
      return {
        model,
        payload: { kind: 'multipart', body: upload },
        isStream: false,
        promptTokens: estimate,
        reserveTokens: estimate + (prompt ? countTextTokens(prompt, encodingForModel(model)) : 0),
        promptTexts: prompt ? [prompt] : [],
        note: `audio of about ${seconds} s (estimated from ${file.size} bytes)`,
        dispose: upload.dispose,
      };
    },
    answer: 'transcription',
  };
}

export const transcriptionsSpec = transcriptionSpec('transcription');
export const translationsSpec = transcriptionSpec('translation');

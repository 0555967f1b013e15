/** How the converted providers' answers read as OpenAI video jobs, and what each job sends (no I/O). */
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import { isJimengId, jimengRequestOf, videoOfJimengResult } from './jimeng.ts';
import { clipLengthsOf } from './native.ts';
import { seedanceRequestOf, videoOfSeedanceTask } from './seedance.ts';
import { videoOfViduTask } from './vidu.ts';

describe('Jimeng', () => {
  it('asks again on a busy answer and fails the job on a refusal or an expired task', () => {
    const id = 'jimeng_t2v_v30/abc';
    for (const code of [50429, 50430, 50500, 50501])
      expect(videoOfJimengResult(id, { code }), String(code)).toBeUndefined();
    expect(videoOfJimengResult(id, { code: 50412, message: 'Text Risk Not Pass' })).toMatchObject({
      status: 'failed',
      error: { code: '50412', message: 'Text Risk Not Pass' },
    });
    expect(videoOfJimengResult(id, { code: 10000, data: { status: 'expired' } })).toMatchObject({
      status: 'failed',
    });
    expect(videoOfJimengResult(id, { code: 10000, data: { status: 'done' } })).toMatchObject({
      status: 'failed',
      error: { code: 'no_video' },
    });
    expect(
      videoOfJimengResult(id, {
        code: 10000,
        data: { status: 'done', video_url: 'https://cdn.example/v.mp4' },
      }),
    ).toEqual({
      id,
      status: 'completed',
      progress: 100,
      content_uri: 'https://cdn.example/v.mp4',
    });
    // A gateway's error page (no code) says nothing about the job.
    expect(
      videoOfJimengResult(id, { ResponseMetadata: { Error: { Code: 'SignatureDoesNotMatch' } } }),
    ).toBeUndefined();
  });

  it("sends a first frame to the same tier's first-frame key, an address as image_urls", () => {
    expect(
      jimengRequestOf({
        model: 'jimeng_t2v_v30_1080p',
        prompt: 'p',
        seconds: 10,
        size: '1920x1080',
        image: 'https://images.example/a.png',
      }),
    ).toEqual({
      reqKey: 'jimeng_i2v_first_v30_1080',
      body: {
        req_key: 'jimeng_i2v_first_v30_1080',
        prompt: 'p',
        seed: -1,
        frames: 241,
        image_urls: ['https://images.example/a.png'],
      },
    });
    expect(isJimengId('jimeng_i2v_first_v30_1080/7392')).toBe(true);
    expect(isJimengId('../etc/7392')).toBe(false);
  });
});

describe('Vidu', () => {
  it('reads the creations states, a success without a clip as a failure', () => {
    expect(videoOfViduTask('1', { state: 'created' })).toMatchObject({ status: 'queued' });
    expect(videoOfViduTask('1', { state: 'queueing' })).toMatchObject({ status: 'queued' });
    expect(videoOfViduTask('1', { state: 'processing' })).toMatchObject({ status: 'in_progress' });
    expect(videoOfViduTask('1', { state: 'success', creations: [] })).toMatchObject({ status: 'failed' });
    expect(videoOfViduTask('1', { state: 'failed', err_code: 'CreditInsufficient' })).toMatchObject({
      status: 'failed',
      error: { code: 'CreditInsufficient' },
    });
    expect(videoOfViduTask('1', { state: 'mystery' })).toBeUndefined();
  });
});

describe('Doubao Seedance', () => {
  it('asks for 1080p above 1280 pixels, sets the ratio only without a first frame, reads the reported duration', () => {
    expect(seedanceRequestOf({ model: 'm', prompt: 'p', seconds: 8, size: '1920x1080' })).toEqual({
      model: 'm',
      content: [{ type: 'text', text: 'p --rs 1080p --rt 16:9 --dur 8' }],
    });
    expect(
      seedanceRequestOf({
        model: 'm',
        prompt: 'p',
        seconds: 5,
        size: '720x1280',
        image: 'data:image/png;base64,AA==',
      }),
    ).toEqual({
      model: 'm',
      content: [
        { type: 'text', text: 'p --rs 720p --dur 5' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' }, role: 'first_frame' },
      ],
    });
    expect(
      videoOfSeedanceTask({
        id: 'cgt-1',
        status: 'succeeded',
        duration: 4,
        content: { video_url: 'https://cdn.example/v.mp4' },
      }),
    ).toMatchObject({ status: 'completed', seconds: 4 });
    for (const status of ['failed', 'cancelled', 'expired'])
      expect(videoOfSeedanceTask({ id: 'cgt-1', status, error: null }), status).toMatchObject({
        status: 'failed',
      });
  });
});

describe('clip lengths', () => {
  it('holds each converted provider to the lengths it makes, with its own default', () => {
    expect(clipLengthsOf(ProviderTypeId.Jimeng)).toMatchObject({ fallback: 5 });
    expect([4, 5, 10].map((s) => clipLengthsOf(ProviderTypeId.Jimeng)?.isAllowed(s))).toEqual([
      false,
      true,
      true,
    ]);
    expect([1, 10, 11].map((s) => clipLengthsOf(ProviderTypeId.Vidu)?.isAllowed(s))).toEqual([
      true,
      true,
      false,
    ]);
    expect([1, 2, 12, 13].map((s) => clipLengthsOf(ProviderTypeId.DoubaoVideo)?.isAllowed(s))).toEqual([
      false,
      true,
      true,
      false,
    ]);
    expect(clipLengthsOf(ProviderTypeId.OpenAI)).toBeUndefined();
  });
});

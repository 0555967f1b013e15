import { describe, expect, it } from 'vitest';
import {
  actionOfCustomId,
  clientCodeOf,
  filterSubmitBody,
  initialStateOf,
  isAccepted,
  planSubmit,
  readSubmitAnswer,
  readUploadAnswer,
  refusalStatusOf,
  statusOf,
} from './wire.ts';

describe('Midjourney submits', () => {
  it('prices each submit as mj_<action>, face swap as swap_face', () => {
    const models = [
      planSubmit('imagine', { prompt: 'a fox' }),
      planSubmit('describe', { base64: 'data:image/png;base64,AA' }),
      planSubmit('blend', { base64Array: [] }),
      planSubmit('shorten', { prompt: 'long prompt' }),
      planSubmit('upload-discord-images', { base64Array: [] }),
      planSubmit('change', { action: 'variation', index: 2, taskId: '17' }),
      planSubmit('simple-change', { content: '17 R' }),
      planSubmit('modal', { taskId: '17', prompt: 'x' }),
      planSubmit('insight-face/swap', { sourceBase64: 'a', targetBase64: 'b' }),
      planSubmit('video', { prompt: 'waves', image: 'https://i/x.png' }),
      planSubmit('edits', { prompt: 'purple sky', image: 'https://i/x.png' }),
    ].map((planned) => (planned.ok ? planned.plan.model : planned.description));
    expect(models).toEqual([
      'mj_imagine',
      'mj_describe',
      'mj_blend',
      'mj_shorten',
      'mj_upload',
      'mj_variation',
      'mj_reroll',
      'mj_modal',
      'swap_face',
      'mj_video',
      'mj_edits',
    ]);
  });

  it('sends a video of a finished drawing to that drawing (its channel); a video from an image to any', () => {
    expect(planSubmit('video', { taskId: '17', index: 1, motion: 'low' })).toEqual({
      ok: true,
      plan: { action: 'VIDEO', model: 'mj_video', originId: '17', isFree: false },
    });
    expect(planSubmit('video', { image: 'https://i/x.png' })).toEqual({
      ok: true,
      plan: { action: 'VIDEO', model: 'mj_video', originId: undefined, isFree: false },
    });
  });

  it('names the task an action works on, and refuses what cannot be served', () => {
    expect(planSubmit('simple-change', { content: ' 1320098173412546  u2 ' })).toEqual({
      ok: true,
      plan: { action: 'UPSCALE', model: 'mj_upscale', originId: '1320098173412546', isFree: false },
    });
    expect(planSubmit('imagine', {})).toEqual({ ok: false, description: 'prompt is required' });
    expect(planSubmit('change', { action: 'ZOOM', taskId: '1' }).ok).toBe(false);
    expect(planSubmit('change', { action: 'UPSCALE' }).ok).toBe(false);
    expect(planSubmit('simple-change', { content: '17 X1' }).ok).toBe(false);
    expect(planSubmit('action', { customId: 'MJ::Nothing', taskId: '1' }).ok).toBe(false);
  });

  it('reads button actions; opening a region or a custom zoom window is free (its modal is billed)', () => {
    expect(
      [
        'MJ::JOB::upsample::1::abc',
        'MJ::JOB::variation::2::abc',
        'MJ::JOB::high_variation::1::abc',
        'MJ::JOB::low_variation::1::abc',
        'MJ::JOB::reroll::0::abc::SOLO',
        'MJ::JOB::pan_left::1::abc::SOLO',
        'MJ::Outpaint::50::1::abc::SOLO',
        'MJ::CustomZoom::abc',
        'MJ::Inpaint::1::abc::SOLO',
      ].map(actionOfCustomId),
    ).toEqual([
      'UPSCALE',
      'VARIATION',
      'HIGH_VARIATION',
      'LOW_VARIATION',
      'REROLL',
      'PAN',
      'ZOOM',
      'CUSTOM_ZOOM',
      'INPAINT',
    ]);
    const inpaint = planSubmit('action', { customId: 'MJ::Inpaint::1::abc::SOLO', taskId: '9' });
    expect(inpaint.ok && inpaint.plan.isFree).toBe(true);
  });

  it('strips the notify hook, the account filter and mode flags as the switches say', () => {
    const body = {
      prompt: 'a fox --relax in snow --turbo',
      notifyHook: 'https://h',
      accountFilter: { a: 1 },
    };
    expect(filterSubmitBody(body, { notify: false, accountFilter: false, modeClear: true })).toEqual({
      prompt: 'a fox in snow',
    });
    expect(filterSubmitBody(body, { notify: true, accountFilter: true, modeClear: false })).toEqual(body);
  });

  it('accepts codes 1, 21 and 22, and reads only well-formed answers', () => {
    expect([1, 21, 22, 23, 24, 4].map(isAccepted)).toEqual([true, true, true, false, false, false]);
    expect(readSubmitAnswer({ code: 1, description: 'ok', result: 1320098173412546 })?.result).toBe(
      '1320098173412546',
    );
    expect(readSubmitAnswer({ description: 'no code' })).toBeUndefined();
    expect(readSubmitAnswer('text')).toBeUndefined();
  });

  it('keeps known task states and calls the rest UNKNOWN', () => {
    expect(['SUCCESS', 'MODAL', 'IN_PROGRESS', '', undefined, 'WEIRD'].map(statusOf)).toEqual([
      'SUCCESS',
      'MODAL',
      'IN_PROGRESS',
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
    ]);
  });

  it('tells clients 1 for 21 and 22, except 21 of a window that waits for its modal', () => {
    expect([1, 21, 22].map((code) => clientCodeOf('IMAGINE', code))).toEqual([1, 1, 1]);
    expect(clientCodeOf('INPAINT', 21)).toBe(21);
    expect(clientCodeOf('CUSTOM_ZOOM', 21)).toBe(21);
    expect(clientCodeOf('INPAINT', 1)).toBe(1);
    expect(clientCodeOf('IMAGINE', 24)).toBe(24);
  });

  it('answers code 30 and HTTP 429 with 429, other refusals with 200 as the proxy did, or 400', () => {
    expect(
      [
        [200, 30],
        [429, 23],
        [429, undefined],
        [200, 23],
        [200, 24],
        [200, 4],
        [400, 4],
        [401, 401],
        [503, undefined],
      ].map(([status, code]) => refusalStatusOf(status as number, code)),
    ).toEqual([429, 429, 429, 200, 200, 200, 400, 400, 400]);
  });

  it('stores an existing finished task finished, never a failure from a submit answer', () => {
    expect(initialStateOf(21, { status: 'SUCCESS', imageUrl: 'https://i/x.png' })).toEqual({
      status: 'SUCCESS',
      imageUrl: 'https://i/x.png',
      finished: true,
    });
    expect(initialStateOf(21, { status: 'IN_PROGRESS' })).toMatchObject({
      status: 'IN_PROGRESS',
      finished: false,
    });
    expect(initialStateOf(21, { status: 'FAILURE' })).toMatchObject({ status: 'SUBMITTED', finished: false });
    expect(initialStateOf(1, { status: 'SUCCESS', imageUrl: 'x' })).toEqual({
      status: 'SUBMITTED',
      imageUrl: '',
      finished: false,
    });
  });

  it('reads an upload answer as its list of URLs', () => {
    expect(
      readUploadAnswer({ code: 1, description: 'success', result: ['https://a', 7, 'https://b'] }),
    ).toEqual({
      code: 1,
      description: 'success',
      result: ['https://a', 'https://b'],
    });
    expect(readUploadAnswer({ code: 4, description: 'bad', result: 'x' })?.result).toEqual([]);
    expect(readUploadAnswer(['https://a'])).toBeUndefined();
  });
});

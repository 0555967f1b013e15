import { describe, expect, it } from 'vitest';
import {
  actionOfCustomId,
  filterSubmitBody,
  isAccepted,
  planSubmit,
  readSubmitAnswer,
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
    ]);
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
});

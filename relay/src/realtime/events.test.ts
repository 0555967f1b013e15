import { describe, expect, it } from 'vitest';
import {
  appendedAudioTokens,
  capResponseCreate,
  capSessionUpdate,
  deltaTokens,
  eventTypeOf,
  itemTokens,
  RESPONSE_OUTPUT_CAP,
  realtimeUsageOf,
} from './events.ts';

describe('realtime events as the relay reads them', () => {
  it('reads the type from the head of a large frame, and parses a frame whose type comes late', () => {
    const append = JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(100_000) });
    expect(eventTypeOf(append)).toBe('input_audio_buffer.append');
    const late = JSON.stringify({
      event_id: 'e1',
      item: { text: 'x'.repeat(300) },
      type: 'conversation.item.create',
    });
    expect(eventTypeOf(late)).toBe('conversation.item.create');
    expect(eventTypeOf('not json')).toBeUndefined();
  });

  it('caps the output of a session and of a response, keeping a lower limit the client asked for', () => {
    expect(capSessionUpdate({ type: 'session.update', session: { voice: 'alloy' } }, true)).toEqual({
      event: {
        type: 'session.update',
        session: { voice: 'alloy', max_response_output_tokens: RESPONSE_OUTPUT_CAP },
      },
      requested: undefined,
    });
    expect(
      capSessionUpdate({ type: 'session.update', session: { max_output_tokens: 'inf' } }, false).event,
    ).toEqual({
      type: 'session.update',
      session: { max_output_tokens: RESPONSE_OUTPUT_CAP },
    });
    expect(capSessionUpdate({ session: { max_output_tokens: 50 } }, false).requested).toBe(50);
    expect(capResponseCreate({ type: 'response.create' }, undefined).outputCap).toBe(RESPONSE_OUTPUT_CAP);
    expect(capResponseCreate({ type: 'response.create' }, 300).outputCap).toBe(300);
    expect(capResponseCreate({ response: { max_output_tokens: 20 } }, 300)).toEqual({
      event: { response: { max_output_tokens: 20 } },
      outputCap: 20,
    });
    expect(capResponseCreate({ response: { max_output_tokens: 99_999 } }, undefined).outputCap).toBe(
      RESPONSE_OUTPUT_CAP,
    );
  });

  it('estimates input from text and audio, and counts output deltas by kind', () => {
    expect(appendedAudioTokens(64_000)).toBe(10); // one second of 24 kHz PCM16 in base64
    expect(
      itemTokens({
        item: {
          content: [
            { type: 'input_text', text: 'abcdef' },
            { type: 'input_audio', audio: 'A'.repeat(6400) },
          ],
        },
      }),
    ).toBe(3);
    expect(itemTokens({ item: { type: 'function_call_output', output: '{"ok":true}' } })).toBe(4);
    expect(deltaTokens('response.output_audio.delta', 'x'.repeat(6400))).toEqual({ audio: 2, text: 0 });
    expect(
      deltaTokens('response.text.delta', JSON.stringify({ type: 'response.text.delta', delta: 'abcdef' })),
    ).toEqual({
      audio: 0,
      text: 2,
    });
    expect(deltaTokens('response.audio_transcript.delta', '{"delta":"abc"}')).toEqual({ audio: 0, text: 0 });
  });

  it("reads response.done's usage with realtime's detail names", () => {
    const usage = realtimeUsageOf({
      type: 'response.done',
      response: {
        usage: {
          input_tokens: 10,
          output_tokens: 5,
          input_token_details: { audio_tokens: 4, cached_tokens: 2 },
          output_token_details: { audio_tokens: 3 },
        },
      },
    });
    expect(usage).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      input_tokens_details: { audio_tokens: 4, cached_tokens: 2 },
      output_tokens_details: { audio_tokens: 3 },
    });
    expect(realtimeUsageOf({ type: 'response.done', response: {} })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import {
  buildChatRequest,
  type ChatState,
  chatReducer,
  checkSettings,
  clampTemperature,
  defaultSettings,
  FIRST_MESSAGE_ID,
  greetingState,
  nextReplyId,
  parseMaxTokens,
} from './messages.ts';

const start = () => greetingState('Hello', 'Hi there', 1);

describe('conversation states', () => {
  it('starts with the greeting and gives the first sent message id 4', () => {
    const state = chatReducer(start(), { type: 'send', text: 'Q', now: 2 });
    expect(state.messages.map((m) => [m.id, m.role, m.status])).toEqual([
      [2, 'user', 'complete'],
      [3, 'assistant', 'complete'],
      [FIRST_MESSAGE_ID, 'user', 'complete'],
      [FIRST_MESSAGE_ID + 1, 'assistant', 'loading'],
    ]);
    expect(nextReplyId(start())).toBe(FIRST_MESSAGE_ID + 1);
  });

  it('goes loading → incomplete → complete, and a finished reply is not changed again', () => {
    let state: ChatState = chatReducer(start(), { type: 'send', text: 'Q', now: 2 });
    state = chatReducer(state, { type: 'delta', id: 5, text: 'A' });
    state = chatReducer(state, { type: 'delta', id: 5, text: 'B' });
    expect(state.messages[3]).toMatchObject({ content: 'AB', status: 'incomplete' });
    state = chatReducer(state, { type: 'finish', id: 5 });
    const done = chatReducer(chatReducer(state, { type: 'delta', id: 5, text: 'late' }), {
      type: 'fail',
      id: 5,
      message: 'x',
    });
    expect(done).toBe(state);
    expect(done.messages[3]).toMatchObject({ content: 'AB', status: 'complete' });
  });

  it('appends the error to what arrived and marks the reply as failed', () => {
    let state = chatReducer(start(), { type: 'send', text: 'Q', now: 2 });
    state = chatReducer(state, { type: 'fail', id: 5, message: 'no channel' });
    expect(state.messages[3]).toMatchObject({ content: 'no channel', status: 'error' });
    state = chatReducer(state, { type: 'send', text: 'Q2', now: 3 });
    state = chatReducer(state, { type: 'delta', id: 7, text: 'half' });
    state = chatReducer(state, { type: 'fail', id: 7, message: 'timeout' });
    expect(state.messages[5]).toMatchObject({ content: 'half\ntimeout', status: 'error' });
  });

  it('marks a stopped reply complete and stopped; clearing empties the context but ids keep counting', () => {
    let state = chatReducer(start(), { type: 'send', text: 'Q', now: 2 });
    state = chatReducer(state, { type: 'finish', id: 5, stopped: true });
    expect(state.messages[3]).toMatchObject({ status: 'complete', stopped: true });
    state = chatReducer(state, { type: 'clear' });
    expect(state.messages).toEqual([]);
    expect(chatReducer(state, { type: 'send', text: 'again', now: 3 }).messages[0]?.id).toBe(6);
  });
});

describe('settings rules', () => {
  it('keeps the temperature on the 0.1 to 1 slider in steps of 0.1', () => {
    expect(clampTemperature(0)).toBe(0.1);
    expect(clampTemperature(0.30000000000000004)).toBe(0.3);
    expect(clampTemperature(7)).toBe(1);
    expect(defaultSettings('sys')).toMatchObject({
      model: 'gpt-4o-mini',
      group: '',
      temperature: 0.1,
      maxTokens: '0',
    });
  });

  it('accepts max tokens as a whole number of 0 or more, and requires a model', () => {
    expect(parseMaxTokens('')).toBe(0);
    expect(parseMaxTokens(' 512 ')).toBe(512);
    for (const bad of ['-1', '1.5', 'many']) expect(parseMaxTokens(bad)).toBeNull();
    expect(checkSettings({ ...defaultSettings(''), model: ' ', maxTokens: '2.5' })).toEqual({
      model: 'error.modelRequired',
      maxTokens: 'error.maxTokens',
    });
    expect(checkSettings(defaultSettings(''))).toEqual({});
  });

  it('sends the system prompt, the finished context and the new question, max tokens as an integer', () => {
    let state = chatReducer(start(), { type: 'send', text: 'Q1', now: 2 });
    state = chatReducer(state, { type: 'fail', id: 5, message: 'oops' });
    const body = buildChatRequest(
      { group: 'vip', model: 'gpt-4o', temperature: 0.7, maxTokens: '256', systemPrompt: 'Be brief.' },
      [...state.messages, { id: 0, role: 'user', content: 'Q2', createdAt: 0, status: 'complete' }],
    );
    expect(body).toEqual({
      model: 'gpt-4o',
      group: 'vip',
      stream: true,
      temperature: 0.7,
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi there' },
        { role: 'user', content: 'Q1' },
        { role: 'user', content: 'Q2' },
      ],
    });
  });

  it('leaves out max tokens 0 (no limit) and a blank system prompt', () => {
    const body = buildChatRequest({ ...defaultSettings('  '), maxTokens: '0' }, [
      { id: 4, role: 'user', content: 'Q', createdAt: 0, status: 'complete' },
    ]);
    expect(body).not.toHaveProperty('max_tokens');
    expect(body.messages).toEqual([{ role: 'user', content: 'Q' }]);
  });
});

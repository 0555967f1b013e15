import { describe, expect, it } from 'vitest';
import { applyReasoningConventions, isReasoningModel, reasoningEffortOf } from './reasoning.ts';

describe('reasoning-model conveniences', () => {
  it('knows the reasoning families', () => {
    for (const model of ['o1', 'o1-mini', 'o3', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini'])
      expect(isReasoningModel(model), model).toBe(true);
    for (const model of ['gpt-4o', 'gpt-4o-mini', 'gpt-5-chat-latest', 'omni-moderation-latest', 'claude-3'])
      expect(isReasoningModel(model), model).toBe(false);
  });

  it('turns an effort suffix into reasoning_effort', () => {
    const body: Record<string, unknown> = { reasoning_effort: 'low' };
    expect(applyReasoningConventions(body, 'o4-mini-medium')).toBe('o4-mini');
    expect(body.reasoning_effort).toBe('medium');
  });

  it('leaves a suffix alone on models that are not reasoning models', () => {
    const body: Record<string, unknown> = { max_tokens: 5, temperature: 0.5 };
    expect(applyReasoningConventions(body, 'my-model-high')).toBe('my-model-high');
    expect(body).toEqual({ max_tokens: 5, temperature: 0.5 });
  });

  it('keeps a max_completion_tokens the client sent over its max_tokens', () => {
    const body: Record<string, unknown> = { max_tokens: 5, max_completion_tokens: 500 };
    applyReasoningConventions(body, 'o3-mini');
    expect(body).toEqual({ max_completion_tokens: 500 });
  });

  it('sends the first system message of o1 and o3 as developer', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'second' },
    ];
    const body: Record<string, unknown> = { messages };
    applyReasoningConventions(body, 'o3-mini-high');
    expect((body.messages as { role: string }[]).map((m) => m.role)).toEqual(['developer', 'user', 'system']);
    expect(messages[0]?.role).toBe('system'); // the client's request is not changed in place
    const mini: Record<string, unknown> = { messages };
    applyReasoningConventions(mini, 'o1-mini');
    expect(mini.messages).toBe(messages);
  });
});

describe('the reasoning effort a consume log records', () => {
  it.each([
    ['the model suffix of a reasoning model', {}, 'o3-mini-high', 'high'],
    ['the suffix over the body', { reasoning_effort: 'low' }, 'o3-mini-medium', 'medium'],
    ["a chat client's reasoning_effort", { reasoning_effort: 'low' }, 'gpt-5', 'low'],
    ["a Responses client's reasoning.effort", { reasoning: { effort: 'minimal' } }, 'gpt-5', 'minimal'],
    ['nothing for a suffix on a model that is no reasoning model', {}, 'gpt-4o-mini-high', undefined],
    ['nothing when none is asked for', { messages: [] }, 'gpt-4o-mini', undefined],
    [
      'nothing for an empty or non-string effort',
      { reasoning_effort: '', reasoning: { effort: 3 } },
      'o3',
      undefined,
    ],
    ['nothing for a body that is not an object', 'text', 'gpt-4o', undefined],
  ])('%s', (_name, body, model, expected) => {
    expect(reasoningEffortOf(body, model)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import type { ChannelView } from '../../contract.ts';
import { chatAnswerRewriteOf } from './answer-rewrite.ts';

const channel = (settings: Partial<ChannelView>): ChannelView => ({
  id: 1,
  other: '',
  type: 1,
  key: 'sk-x',
  baseUrl: '',
  headers: {},
  organization: undefined,
  paramOverride: undefined,
  ...settings,
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index, delta, finish_reason: finish }],
  });

const contentOf = (data: string, index = 0) =>
  (JSON.parse(data).choices as { index: number; delta: { content?: string } }[]).find(
    (c) => c.index === index,
  )?.delta.content ?? '';

describe('chat answer rewrites of channel settings', () => {
  it('is off unless a setting asks for it', () => {
    expect(chatAnswerRewriteOf(channel({}))).toBeUndefined();
  });

  it('closes <think> at the finish reason when the stream never sends content', () => {
    const rewrite = chatAnswerRewriteOf(channel({ thinkingToContent: true }))!.createStream();
    const text = [
      rewrite(chunk({ role: 'assistant', content: '' })),
      rewrite(chunk({ reasoning: 'only thoughts' })),
      rewrite(chunk({}, 'length')),
    ]
      .map((data) => contentOf(data))
      .join('');
    expect(text).toBe('<think>\nonly thoughts\n</think>\n');
  });

  it('keeps one <think> state per choice', () => {
    const rewrite = chatAnswerRewriteOf(channel({ thinkingToContent: true }))!.createStream();
    const pieces = [
      [0, rewrite(chunk({ reasoning_content: 'a' }, null, 0))],
      [1, rewrite(chunk({ reasoning_content: 'b' }, null, 1))],
      [0, rewrite(chunk({ content: 'A' }, null, 0))],
      [1, rewrite(chunk({ content: 'B' }, null, 1))],
    ] as const;
    const of = (index: number) =>
      pieces
        .filter(([i]) => i === index)
        .map(([i, data]) => contentOf(data, i))
        .join('');
    expect(of(0)).toBe('<think>\na\n</think>\nA');
    expect(of(1)).toBe('<think>\nb\n</think>\nB');
  });

  it('passes what is not a chat answer unchanged (errors, garbage)', () => {
    const rewrite = chatAnswerRewriteOf(channel({ thinkingToContent: true, forceFormat: true }))!;
    const error = JSON.stringify({ error: { message: 'overloaded' } });
    expect(rewrite.json(error)).toBe(error);
    expect(rewrite.createStream()('not json')).toBe('not json');
  });

  it('force_format fills the documented fields of a loose answer', () => {
    const rewrite = chatAnswerRewriteOf(channel({ forceFormat: true }))!;
    const answer = JSON.parse(
      rewrite.json(JSON.stringify({ id: 'x', choices: [{ message: { content: null } }], extra: 1 })),
    );
    expect(answer).toMatchObject({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: null }],
    });
    expect(answer).not.toHaveProperty('extra');
    expect(typeof answer.created).toBe('number');
  });
});

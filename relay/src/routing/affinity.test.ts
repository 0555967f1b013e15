import { channelAffinitySchema, DEFAULT_CHANNEL_AFFINITY } from '@turnpike/core/channels/affinity-rules';
import { describe, expect, it } from 'vitest';
import { createMemoryAffinityStore, sessionOf } from './affinity.ts';

const rules = DEFAULT_CHANNEL_AFFINITY.rules;
const session = (url: string, headers: Record<string, string>, body: unknown) =>
  sessionOf(rules, { url, headers }, body);

describe('session affinity rules', () => {
  it('finds the session of Claude Code, Codex, OpenAI and Gemini calls with the default rules', () => {
    expect(session('/v1/messages', { 'x-claude-code-session-id': 'abc-123' }, {})).toEqual({
      rule: 'claude-code',
      value: 'abc-123',
    });
    const userId = 'user_5f2e_account_9a1b-22_session_7c8d9e0f-1111-2222-3333-444455556666';
    expect(session('/v1/messages', {}, { metadata: { user_id: userId } })).toEqual({
      rule: 'claude-code-metadata',
      value: '7c8d9e0f-1111-2222-3333-444455556666',
    });
    expect(session('/v1/responses', {}, { prompt_cache_key: 'codex-thread-1', user: 'u' })).toEqual({
      rule: 'prompt-cache-key',
      value: 'codex-thread-1',
    });
    expect(session('/v1/chat/completions?x=1', {}, { user: 'alice' })).toEqual({
      rule: 'openai-user',
      value: 'alice',
    });
    expect(
      session('/v1beta/models/gemini-2.5-pro:generateContent', {}, { cachedContent: 'cachedContents/xyz' }),
    ).toEqual({ rule: 'gemini-cached-content', value: 'cachedContents/xyz' });
    expect(session('/v1/chat/completions', { 'x-opencode-session': 'ses_42' }, { user: 'alice' })).toEqual({
      rule: 'opencode-session',
      value: 'ses_42',
    });
    expect(
      session(
        '/v1beta/models/gemini-2.5-pro:streamGenerateContent',
        { 'user-agent': 'GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)' },
        {},
      ),
    ).toEqual({ rule: 'gemini-cli', value: 'GeminiCLI' });
    expect(
      session('/v1beta/models/gemini-2.5-pro:generateContent', { 'user-agent': 'curl/8' }, {}),
    ).toBeUndefined();
  });

  it('finds no session where no rule applies', () => {
    expect(session('/v1/embeddings', {}, { user: 'alice' })).toBeUndefined();
    expect(session('/v1/messages', {}, { metadata: { user_id: 'no session here' } })).toBeUndefined();
    expect(session('/v1/chat/completions', {}, { user: '   ' })).toBeUndefined();
  });

  it('applies a changed set of rules at once (rules are made ready per option value)', () => {
    const call = { url: '/v1/chat/completions', headers: {} };
    const body = { metadata: { conversation: 'conv_77' }, user: 'alice' };
    expect(sessionOf(rules, call, body)).toEqual({ rule: 'openai-user', value: 'alice' });
    const changed = [
      {
        name: 'conversation',
        paths: ['/v1/chat/'],
        body_field: 'metadata.conversation',
        pattern: 'conv_(\\d+)',
      },
    ];
    expect(sessionOf(changed, call, body)).toEqual({ rule: 'conversation', value: '77' });
    expect(sessionOf(rules, call, body)).toEqual({ rule: 'openai-user', value: 'alice' });
  });

  it('refuses rules that cannot work, with the reason', () => {
    const bad = (rule: Record<string, unknown>) =>
      channelAffinitySchema.safeParse({ ...DEFAULT_CHANNEL_AFFINITY, rules: [rule] }).error?.issues[0]
        ?.message;
    expect(bad({ name: 'x', paths: ['/v1/messages'] })).toBe(
      'a rule reads exactly one of header or body_field',
    );
    expect(bad({ name: 'x', paths: ['/v1/messages'], header: 'a', body_field: 'b' })).toBe(
      'a rule reads exactly one of header or body_field',
    );
    expect(bad({ name: 'x', paths: ['/v1/messages'], header: 'a', pattern: '([' })).toBe(
      'pattern must be a valid regular expression',
    );
    expect(bad({ name: 'x', paths: ['v1'], header: 'a' })).toBe('a path starts with /');
    expect(channelAffinitySchema.safeParse({ ...DEFAULT_CHANNEL_AFFINITY, ttl_seconds: 0 }).success).toBe(
      false,
    );
    expect(channelAffinitySchema.safeParse(DEFAULT_CHANNEL_AFFINITY).success).toBe(true);
  });
});

describe('the in-memory binding store', () => {
  it('keeps at most max entries, dropping the oldest, and forgets a binding after its TTL', async () => {
    let clock = 0;
    const store = createMemoryAffinityStore(
      () => 2,
      () => clock,
    );
    await store.set('a', { channelId: 1 }, 1000);
    await store.set('b', { channelId: 2, key: 'fp' }, 1000);
    await store.set('c', { channelId: 3 }, 1000);
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toEqual({ channelId: 2, key: 'fp' });
    clock = 1000;
    expect(await store.get('c')).toBeUndefined();
  });
});

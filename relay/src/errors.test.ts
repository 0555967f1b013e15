import { defaultOptionValue } from '@turnpike/core/options/registry';
import { describe, expect, it } from 'vitest';
import type { RelayError } from './contract.ts';
import {
  type DisableContext,
  disableReason,
  localError,
  mapStatusCode,
  parseUpstreamError,
  type RetryContext,
  shouldRetry,
  toOpenAiErrorBody,
} from './errors.ts';
import { createWordMatcher } from './metering/sensitive.ts';

const openAi = (status: number, type: string, code: string | null, message: string) =>
  parseUpstreamError(status, JSON.stringify({ error: { message, type, param: null, code } }));

describe('parseUpstreamError', () => {
  it('reads OpenAI error bodies', () => {
    expect(openAi(401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided')).toEqual({
      status: 401,
      message: 'Incorrect API key provided',
      type: 'invalid_request_error',
      code: 'invalid_api_key',
      param: null,
      isLocal: false,
    });
  });

  it('reads Anthropic, string and flat error shapes', () => {
    const anthropic = parseUpstreamError(
      529,
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    expect([anthropic.type, anthropic.message]).toEqual(['overloaded_error', 'Overloaded']);
    expect(parseUpstreamError(400, '{"error":"model not found"}').message).toBe('model not found');
    const flat = parseUpstreamError(429, '{"message":"access terminated","code":"1113"}');
    expect([flat.message, flat.code, flat.type]).toEqual(['access terminated', '1113', 'upstream_error']);
  });

  it('falls back to the status for empty or HTML bodies', () => {
    for (const body of ['', '<html><body>502 Bad Gateway</body></html>', '{}']) {
      const error = parseUpstreamError(502, body);
      expect(error.message).toBe('bad response status code 502');
      expect(error.code).toBe('bad_response_status_code');
      expect(error.type).toBe('upstream_error');
    }
  });

  it('cuts long messages', () => {
    expect(parseUpstreamError(500, 'x'.repeat(5000)).message).toHaveLength(1000);
  });
});

describe('toOpenAiErrorBody', () => {
  it('answers in OpenAI shape with the request id appended', () => {
    expect(
      toOpenAiErrorBody(localError(403, 'insufficient_user_quota', 'user quota is not enough'), 'req-1'),
    ).toEqual({
      error: {
        message: 'user quota is not enough (request id: req-1)',
        type: 'new_api_error',
        param: null,
        code: 'insufficient_user_quota',
      },
    });
  });
});

describe('mapStatusCode', () => {
  it('rewrites mapped statuses but never 200 or to an invalid status', () => {
    expect(mapStatusCode(429, { '429': '500' })).toBe(500);
    expect(mapStatusCode(200, { '200': '500' })).toBe(200);
    expect(mapStatusCode(401, { '429': '500' })).toBe(401);
    expect(mapStatusCode(429, { '429': 'abc' })).toBe(429);
    expect(mapStatusCode(429, undefined)).toBe(429);
  });
});

describe('shouldRetry', () => {
  const context: RetryContext = { remaining: 2, isForcedChannel: false };
  const status = (s: number) => parseUpstreamError(s, '');
  const cases: [number, boolean][] = [
    [429, true],
    [307, true],
    [500, true],
    [502, true],
    [503, true],
    [504, false],
    [524, false],
    [400, false],
    [408, false],
    [401, true],
    [403, true],
    [404, true],
  ];
  it.each(cases)('status %i → retry %s', (code, expected) => {
    expect(shouldRetry(status(code), context)).toBe(expected);
  });

  it('retries 400 only on Anthropic channels', () => {
    expect(shouldRetry(status(400), { ...context, isAnthropicChannel: true })).toBe(true);
  });

  it('never retries local errors, forced channels or with no attempts left', () => {
    expect(shouldRetry(localError(400, 'invalid_text_request', 'bad'), context)).toBe(false);
    expect(shouldRetry(status(500), { ...context, isForcedChannel: true })).toBe(false);
    expect(shouldRetry(status(500), { ...context, remaining: 0 })).toBe(false);
  });

  it('retries an empty answer or a slow first token only when the option is on', () => {
    expect(shouldRetry('empty-response', context)).toBe(false);
    expect(shouldRetry('first-token-timeout', { ...context, retryEmptyAndSlow: true })).toBe(true);
    expect(shouldRetry('connect-error', context)).toBe(true);
  });
});

describe('disableReason', () => {
  const context: DisableContext = {
    automaticDisableEnabled: true,
    autoBan: true,
    keywords: createWordMatcher(defaultOptionValue('AutomaticDisableKeywords')),
  };
  const shouldDisableChannel = (error: RelayError, c: DisableContext) =>
    disableReason(error, c) !== undefined;

  it('disables on 401, key codes, account types and keywords', () => {
    expect(disableReason(parseUpstreamError(401, ''), context)).toBe('upstream answered 401 Unauthorized');
    expect(
      shouldDisableChannel(openAi(400, 'invalid_request_error', 'account_deactivated', 'x'), context),
    ).toBe(true);
    expect(shouldDisableChannel(openAi(429, 'insufficient_quota', null, 'x'), context)).toBe(true);
    expect(
      disableReason(
        openAi(400, 'invalid_request_error', null, 'YOU EXCEEDED YOUR CURRENT QUOTA, check plan'),
        context,
      ),
    ).toBe('upstream error message contains "You exceeded your current quota"');
  });

  it('does not disable on a plain 429, a 500 or a non-Gemini 403', () => {
    expect(
      shouldDisableChannel(openAi(429, 'rate_limit_error', 'rate_limit_exceeded', 'slow down'), context),
    ).toBe(false);
    expect(shouldDisableChannel(parseUpstreamError(500, ''), context)).toBe(false);
    expect(shouldDisableChannel(parseUpstreamError(403, ''), context)).toBe(false);
    expect(
      shouldDisableChannel(parseUpstreamError(403, ''), { ...context, forbiddenMeansRevokedKey: true }),
    ).toBe(true);
  });

  it('respects the option, the channel auto_ban flag and local errors', () => {
    const error = parseUpstreamError(401, '');
    expect(shouldDisableChannel(error, { ...context, automaticDisableEnabled: false })).toBe(false);
    expect(shouldDisableChannel(error, { ...context, autoBan: false })).toBe(false);
    expect(shouldDisableChannel({ ...error, isLocal: true }, context)).toBe(false);
  });
});

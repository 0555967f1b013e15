import { describe, expect, it } from 'vitest';
import { edgeErrorBody, urlRefusal } from './edge-errors.ts';

describe('edge refusals', () => {
  it('shape the body for the protocol of the path', () => {
    expect(edgeErrorBody('/api/user/1', 414, 'URI_TOO_LONG', 'too long')).toEqual({
      success: false,
      message: 'too long',
      code: 'URI_TOO_LONG',
    });
    expect(edgeErrorBody('/v1/models/x', 414, 'URI_TOO_LONG', 'too long')).toEqual({
      error: { message: 'too long', type: 'invalid_request_error', param: null, code: 'uri_too_long' },
    });
    expect(edgeErrorBody('/pg/chat/completions', 431, 'HEADERS_TOO_LARGE', 'big')).toMatchObject({
      error: { code: 'request_header_fields_too_large' },
    });
    expect(edgeErrorBody('/v1/messages', 431, 'HEADERS_TOO_LARGE', 'big')).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'big' },
    });
    expect(edgeErrorBody('/v1beta/models/g:generateContent', 400, 'BAD_URL', 'bad')).toEqual({
      error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' },
    });
    expect(edgeErrorBody('/v1/models/g%E0', 400, 'BAD_URL', 'bad', 'POST')).toEqual({
      error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' },
    });
    expect(edgeErrorBody('/mj-fast/mj/image/x', 414, 'URI_TOO_LONG', 'long')).toEqual({
      code: 414,
      description: 'long',
      type: 'turnpike_error',
    });
    expect(edgeErrorBody('/suno/fetch/x', 400, 'BAD_URL', 'bad')).toEqual({
      code: 'invalid_url',
      message: 'bad',
      data: null,
    });
    // Unknown: both an envelope and an OpenAI error, so either client reads it.
    expect(edgeErrorBody(undefined, 431, 'HEADERS_TOO_LARGE', 'big')).toMatchObject({
      success: false,
      code: 'HEADERS_TOO_LARGE',
      error: { code: 'request_header_fields_too_large' },
    });
  });

  it('refuses a path segment over the router’s limit and undecodable escapes, nothing else', () => {
    expect(urlRefusal(`/v1/models/${'m'.repeat(101)}`)).toMatchObject({ status: 414 });
    expect(urlRefusal(`/v1/models/${'m'.repeat(100)}`)).toBeUndefined();
    expect(urlRefusal('/v1/models/%E0')).toMatchObject({ status: 400 });
    expect(urlRefusal('/v1/models/gpt%2D4')).toBeUndefined();
  });
});

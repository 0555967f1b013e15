import { describe, expect, it } from 'vitest';
import { parseBatchInput } from './input.ts';

const line = (custom_id: string, model = 'gpt-4o-mini', url = '/v1/chat/completions') =>
  JSON.stringify({
    custom_id,
    method: 'POST',
    url,
    body: { model, messages: [{ role: 'user', content: 'hi' }] },
  });

describe('batch input files', () => {
  it("reads the lines of a well-formed file (the example of OpenAI's batch guide)", () => {
    const file = `${line('request-1')}\n${line('request-2')}\n`;
    const parsed = parseBatchInput(file);
    expect(parsed).toMatchObject({ ok: true, url: '/v1/chat/completions', model: 'gpt-4o-mini' });
    expect(parsed.ok && parsed.lines.map((l) => l.customId)).toEqual(['request-1', 'request-2']);
  });

  it('names the line of each problem: bad JSON, a repeated custom_id, a second model, a second endpoint', () => {
    const file = [
      line('a'),
      '{not json',
      line('a'),
      line('b', 'gpt-4o'),
      line('c', 'gpt-4o-mini', '/v1/embeddings'),
      JSON.stringify({ custom_id: 'd', method: 'GET', url: '/v1/chat/completions', body: {} }),
      JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } }),
    ].join('\n');
    const parsed = parseBatchInput(file);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problems.map((p) => [p.line, p.code])).toEqual([
      [2, 'invalid_json_line'],
      [3, 'duplicate_custom_id'],
      [4, 'mismatched_model'],
      [5, 'mismatched_url'],
      [6, 'invalid_method'],
      [7, 'missing_required_parameter'],
    ]);
  });

  it('refuses an empty file and an endpoint batches do not serve', () => {
    expect(parseBatchInput('\n\n')).toMatchObject({ ok: false, problems: [{ code: 'empty_file' }] });
    expect(parseBatchInput(line('a', 'dall-e-3', '/v1/images/generations'))).toMatchObject({
      ok: false,
      problems: [{ code: 'invalid_url', line: 1, param: 'url' }],
    });
  });
});

/**
 * The item shapes of OpenAI's Responses API reference (https://platform.openai.com/docs/api-reference/responses):
 * an input string is one user message of `input_text`; the input-items list answers `object: "list"` with
 * `first_id`, `last_id` and `has_more`, pages after or before an item id, newest first unless `order=asc`.
 */
import { describe, expect, it } from 'vitest';
import { inputItemsOf, listPage, readListQuery, replayInput } from './items.ts';

const items = ['a', 'b', 'c', 'd'].map((id) => ({ id, type: 'message' }));
const ids = (page: Record<string, unknown>) => (page.data as { id: string }[]).map((item) => item.id);

describe('input items of stored responses', () => {
  it('lists a string input as one user message with an id', () => {
    const [item, ...rest] = inputItemsOf('Tell me a joke');
    expect(rest).toEqual([]);
    expect(item).toMatchObject({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Tell me a joke' }],
    });
    expect(item?.id).toMatch(/^msg_[0-9a-f]{24}$/);
  });

  it('keeps the ids items came with and gives typed ids to the rest', () => {
    const listed = inputItemsOf([
      { id: 'msg_client', role: 'user', content: 'hi' },
      { type: 'function_call_output', call_id: 'call_1', output: '18C' },
    ]);
    expect(listed[0]).toMatchObject({ id: 'msg_client', content: [{ type: 'input_text', text: 'hi' }] });
    expect(listed[1]?.id).toMatch(/^fco_/);
  });

  it('pages newest first by default, and asc on request, with after and before', () => {
    const query = (fields: Record<string, string>) => {
      const read = readListQuery(fields);
      if (typeof read === 'string') throw new Error(read);
      return read;
    };
    const newest = listPage(items, query({ limit: '2' }));
    expect(newest).toMatchObject({ object: 'list', first_id: 'd', last_id: 'c', has_more: true });
    expect(ids(listPage(items, query({ limit: '2', after: 'c' })))).toEqual(['b', 'a']);
    expect(listPage(items, query({ order: 'asc', after: 'b' }))).toMatchObject({ has_more: false });
    expect(ids(listPage(items, query({ order: 'asc', after: 'b' })))).toEqual(['c', 'd']);
    const before = listPage(items, query({ order: 'asc', before: 'd', limit: '2' }));
    expect(ids(before)).toEqual(['b', 'c']);
    expect(before.has_more).toBe(true);
    expect(listPage([], query({}))).toEqual({
      object: 'list',
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });

  it('refuses a limit outside 1 to 100 and an unknown order', () => {
    expect(readListQuery({ limit: '0' })).toBeTypeOf('string');
    expect(readListQuery({ limit: '101' })).toBeTypeOf('string');
    expect(readListQuery({ order: 'sideways' })).toBeTypeOf('string');
  });

  it('replays what was said and done, without ids, built-in tool calls or unreadable reasoning', () => {
    const turn = {
      input: [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      output: [
        { id: 'rs_1', type: 'reasoning', summary: [] },
        { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'q' } },
        {
          id: 'fc_1',
          type: 'function_call',
          call_id: 'call_1',
          name: 'f',
          arguments: '{}',
          status: 'completed',
        },
        { id: 'rs_2', type: 'reasoning', summary: [], encrypted_content: 'sealed' },
      ],
    };
    expect(replayInput([turn], false)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
    ]);
    expect(replayInput([turn], true).at(-1)).toEqual({
      type: 'reasoning',
      summary: [],
      encrypted_content: 'sealed',
    });
  });
});

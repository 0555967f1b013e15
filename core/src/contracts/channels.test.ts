import { describe, expect, it } from 'vitest';
import { createChannelSchema, editTagSchema, toChannelTagView, updateChannelSchema } from './channels.ts';

describe('channel contracts', () => {
  it('joins model and group lists and trims the base URL', () => {
    const parsed = createChannelSchema.parse({
      name: 'n',
      key: 'k',
      models: ['a', ' b', 'a'],
      groups: ['default', 'vip'],
      base_url: 'https://x.test/',
    });
    expect(parsed).toMatchObject({
      type: 1,
      models: 'a,b',
      group: 'default,vip',
      base_url: 'https://x.test',
    });
  });
  it('clamps a negative weight to 0 and refuses a priority below -999', () => {
    expect(updateChannelSchema.parse({ id: 1, weight: -3 }).weight).toBe(0);
    expect(updateChannelSchema.safeParse({ id: 1, priority: -1000 }).success).toBe(false);
  });
  it('treats blank tag-edit fields as no change, but a blank new tag as a change', () => {
    expect(editTagSchema.safeParse({ tag: 't', models: '', priority: '' }).success).toBe(false);
    expect(editTagSchema.parse({ tag: 't', new_tag: '' })).toMatchObject({ new_tag: '' });
  });
  it('shows priority and weight on a tag row only when all children share them', () => {
    const child = {
      priority: 1,
      weight: 2,
      response_time: 100,
      used_quota: 5,
      group: 'a',
      models: 'm',
      status: 1,
    };
    const row = toChannelTagView('t', [
      child as never,
      { ...child, priority: 3, response_time: 300, group: 'b', status: 2 } as never,
    ]);
    expect(row).toMatchObject({
      priority: null,
      weight: 2,
      response_time: 200,
      used_quota: 10,
      group: 'a,b',
      status: 1,
    });
  });
});

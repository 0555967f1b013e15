import { describe, expect, it } from 'vitest';
import { adminLogQuerySchema, deleteLogsQuerySchema, userVisibleOther } from './logs.ts';

describe('userVisibleOther', () => {
  it('removes the routing details and keeps the billing details', () => {
    const other = JSON.stringify({
      model_ratio: 2.5,
      group_ratio: 1,
      cache_tokens: 12,
      admin_info: { use_channel: ['3', '9'] },
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-2024-08-06',
      channel_type: 1,
    });
    expect(JSON.parse(userVisibleOther(other))).toEqual({
      model_ratio: 2.5,
      group_ratio: 1,
      cache_tokens: 12,
    });
  });

  it('answers an empty string for text it cannot check', () => {
    expect(userVisibleOther('')).toBe('');
    expect(userVisibleOther('not json {admin_info}')).toBe('');
    expect(userVisibleOther('[{"admin_info":1}]')).toBe('');
    expect(userVisibleOther('"admin_info"')).toBe('');
    expect(userVisibleOther('null')).toBe('');
  });
});

describe('log query contracts', () => {
  it('treats blank filters as absent and pages from 1', () => {
    expect(adminLogQuerySchema.parse({ type: '', username: ' ', channel: '', p: '0' })).toEqual({
      p: 1,
      page_size: 10,
    });
  });

  it('requires a positive whole target_timestamp to delete', () => {
    expect(deleteLogsQuerySchema.safeParse({}).success).toBe(false);
    expect(deleteLogsQuerySchema.safeParse({ target_timestamp: '1.5' }).success).toBe(false);
    expect(deleteLogsQuerySchema.parse({ target_timestamp: '1700000000' })).toEqual({
      target_timestamp: 1_700_000_000,
    });
  });
});

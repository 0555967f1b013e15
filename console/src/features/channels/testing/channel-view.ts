import { parseChannelInfo } from '@turnpike/core/channels/multi-key';
import type { ChannelView } from '../api/channels.ts';

/** A channel as `GET /api/channel/` lists it: an enabled single-key OpenAI channel, changed by `overrides`. */
export const channelView = (
  overrides: Partial<ChannelView> & Pick<ChannelView, 'id' | 'name'>,
): ChannelView => ({
  type: 1,
  key: '',
  status: 1,
  base_url: '',
  other: '',
  openai_organization: '',
  test_model: '',
  models: 'gpt-4o',
  group: 'default',
  weight: 0,
  priority: 0,
  auto_ban: 1,
  max_input_tokens: 0,
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
  tag: '',
  model_mapping: '',
  status_code_mapping: '',
  setting: '',
  param_override: '',
  other_info: '',
  response_time: 0,
  balance: 0,
  balance_updated_time: 0,
  used_quota: 0,
  test_time: 0,
  created_time: 1_700_000_000,
  managed_by: null,
  channel_info: parseChannelInfo(null),
  ...overrides,
});

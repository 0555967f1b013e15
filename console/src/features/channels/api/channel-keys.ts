import type { KeyActionValue, KeyStatusPage } from '@turnpike/core/contracts/channels';
import { api } from '../../../lib/api.ts';

export type { KeyActionValue, KeyStatusPage };

/** The keys of a multi-key channel, masked (`POST /api/channel/multi_key/manage`, action get_key_status). */
export const keyStatusQueryKey = (channelId: number, page: number) =>
  ['channel-keys', channelId, page] as const;

export const fetchKeyStatus = (channelId: number, page: number, pageSize: number) =>
  api.post<KeyStatusPage>('/api/channel/multi_key/manage', {
    channel_id: channelId,
    action: 'get_key_status',
    page,
    page_size: pageSize,
  });

/** Enables, disables or deletes one key (`keyIndex`) or all of them; answers nothing, the message says what was done. */
export const manageKeys = (
  channelId: number,
  action: Exclude<KeyActionValue, 'get_key_status'>,
  keyIndex?: number,
) =>
  api.post<unknown>('/api/channel/multi_key/manage', {
    channel_id: channelId,
    action,
    ...(keyIndex === undefined ? {} : { key_index: keyIndex }),
  });

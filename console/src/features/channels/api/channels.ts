import type { CreateModeValue, KeyModeValue, MultiKeyModeValue } from '@turnpike/core/channels/multi-key';
import type { ChannelTagView, ChannelView } from '@turnpike/core/contracts/channels';
import { api } from '../../../lib/api.ts';
import { getSessionUser } from '../../../lib/session.ts';
import type { TestAllProgress } from '../validation.ts';

export type { ChannelTagView, ChannelView };

/** One row of the list: a channel, or in tag mode a tag with its channels. */
export type ChannelRow = ChannelView | ChannelTagView;

export const isTagRow = (row: ChannelRow): row is ChannelTagView => 'children' in row;

export interface ChannelPage {
  items: ChannelRow[];
  total: number;
  page: number;
  page_size: number;
}

export interface ChannelSearch {
  keyword: string;
  group: string;
  model: string;
  page: number;
  pageSize: number;
  idSort: boolean;
  tagMode: boolean;
}

export const channelsQueryKey = (search: ChannelSearch) => ['channels', search] as const;

/** The list, or the search when a keyword, group or model is given. */
export function fetchChannels(s: ChannelSearch): Promise<ChannelPage> {
  const common = { p: s.page, page_size: s.pageSize, id_sort: s.idSort, tag_mode: s.tagMode };
  if (s.keyword.trim() || s.group || s.model.trim()) {
    return api.get<ChannelPage>('/api/channel/search', {
      query: { keyword: s.keyword.trim(), group: s.group, model: s.model.trim(), ...common },
    });
  }
  return api.get<ChannelPage>('/api/channel/', { query: common });
}

export const fetchChannel = (id: number) => api.get<ChannelView>(`/api/channel/${id}`);
export const fetchGroups = () => api.get<string[]>('/api/group/');
export const fetchEnabledModels = () => api.get<string[]>('/api/channel/models_enabled');
export const fetchCatalogueModels = () => api.get<{ id: string }[]>('/api/channel/models');

/** The fields the drawer sends; models and groups as lists. */
export interface ChannelInput {
  id?: number;
  name: string;
  type: number;
  key?: string;
  base_url: string;
  other: string;
  openai_organization: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  param_override: string;
  auto_ban: 0 | 1;
  test_model: string;
  tag: string;
  priority: number;
  weight: number;
  max_input_tokens: number;
  rpm_limit?: number;
  tpm_limit?: number;
  concurrency_limit?: number;
  /** Create: one channel per key line (batch), one multi-key channel, or one key (docs/adr/0027). */
  mode?: CreateModeValue;
  multi_key_mode?: MultiKeyModeValue;
  /** Edit: the key field adds keys or replaces them. */
  key_mode?: KeyModeValue;
}

export const createChannels = (input: ChannelInput) => api.post<ChannelView[]>('/api/channel/', input);
export const updateChannel = (input: ChannelInput & { id: number }) =>
  api.put<ChannelView>('/api/channel/', input);

/** Quick edits from the table: status, priority or weight. */
export const patchChannel = (
  id: number,
  patch: Partial<Pick<ChannelView, 'status' | 'priority' | 'weight'>>,
) => api.put<ChannelView>('/api/channel/', { id, ...patch });

/**
 * A new channel with the settings and stored key of another; the name gets `suffix`. Silent: the page shows
 * 'channel copy failed: ' with the reason itself.
 */
export const copyChannel = (id: number, options: { suffix: string; reset_balance: boolean }) =>
  api.post<ChannelView>(`/api/channel/copy/${id}`, options, { silent: true });

export const deleteChannel = (id: number) => api.delete<unknown>(`/api/channel/${id}`);
export const deleteChannels = (ids: number[]) => api.post<number>('/api/channel/batch', { ids });
export const deleteDisabledChannels = () => api.delete<number>('/api/channel/disabled');
export const fixChannels = () => api.post<number>('/api/channel/fix');
export const tagChannels = (ids: number[], tag: string) =>
  api.post<number>('/api/channel/batch/tag', { ids, tag });
export const setTagStatus = (tag: string, enabled: boolean) =>
  api.post<number>(`/api/channel/tag/${enabled ? 'enabled' : 'disabled'}`, { tag });

export interface TagEdit {
  tag: string;
  new_tag?: string;
  model_mapping?: string;
  models?: string;
  groups?: string;
  priority?: number;
  weight?: number;
}
export const editTag = (edit: TagEdit) => api.put<number>('/api/channel/tag', edit);

export const updateBalance = (id: number) =>
  api.get<{ balance: number }>(`/api/channel/update_balance/${id}`);
export const updateAllBalances = () => api.get<unknown>('/api/channel/update_balance');

/** Model names the upstream offers: by saved channel (edit) or by type, base URL and key (create). */
export const fetchUpstreamModelsOf = (id: number) => api.get<string[]>(`/api/channel/fetch_models/${id}`);
export const fetchUpstreamModels = (body: { type: number; base_url: string; key: string; other: string }) =>
  api.post<string[]>('/api/channel/fetch_models', body);

/** What a channel test answers; `unavailable` when the server does not offer the test (404). */
export type TestOutcome =
  | { kind: 'ok'; seconds: number }
  | { kind: 'failed'; message: string }
  | { kind: 'unavailable' };

/**
 * The relay's channel test. It answers `{ success, message, time }` with the time beside `data`, so this call reads
 * the whole envelope instead of going through `request`.
 */
async function runTest(path: string, model?: string): Promise<TestOutcome> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const user = getSessionUser();
  if (user) headers['New-Api-User'] = String(user.id);
  const url = model ? `${path}?model=${encodeURIComponent(model)}` : path;
  let response: Response;
  try {
    response = await fetch(url, { method: 'GET', headers, credentials: 'same-origin' });
  } catch (error) {
    return { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
  if (response.status === 404) return { kind: 'unavailable' };
  let body: { success?: boolean; message?: string; time?: number; data?: { time?: number } } = {};
  try {
    body = await response.json();
  } catch {
    return { kind: 'failed', message: `HTTP ${response.status}` };
  }
  if (!response.ok || !body.success)
    return { kind: 'failed', message: body.message || `HTTP ${response.status}` };
  return { kind: 'ok', seconds: Number(body.time ?? body.data?.time ?? 0) };
}

export const testChannel = (id: number, model?: string) => runTest(`/api/channel/test/${id}`, model);
export const testAllChannels = () => runTest('/api/channel/test');

/** The current or last test of every channel; silent, a server without it just shows no progress. */
export const fetchTestProgress = () =>
  api.get<TestAllProgress>('/api/channel/test/progress', { silent: true });

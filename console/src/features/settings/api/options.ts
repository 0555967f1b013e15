import { queryOptions } from '@tanstack/react-query';
import { api } from '../../../lib/api.ts';

/** Every readable option as key → text (GET /api/option/; secrets are never listed). */
export type OptionValues = Record<string, string>;

export const optionsQuery = queryOptions({
  queryKey: ['options'],
  queryFn: async (): Promise<OptionValues> => {
    const list = await api.get<{ key: string; value: string }[]>('/api/option/');
    return Object.fromEntries((list ?? []).map((o) => [o.key, o.value]));
  },
});

/** Switch keys (`…Enabled`, `…enabled`, DefaultCollapseSidebar) are saved one after another, the rest in parallel. */
export function isSwitchKey(key: string): boolean {
  return /enabled$/i.test(key) || key === 'DefaultCollapseSidebar';
}

export interface SaveResult {
  saved: string[];
  failed: string[];
}

/** PUT /api/option/ once per key (spec 01 section 7). Failures are collected, not thrown. */
export async function saveOptions(entries: readonly (readonly [string, string])[]): Promise<SaveResult> {
  const saved: string[] = [];
  const failed: string[] = [];
  const putOne = async ([key, value]: readonly [string, string]) => {
    try {
      await api.put('/api/option/', { key, value }, { silent: true });
      saved.push(key);
    } catch {
      failed.push(key);
    }
  };
  for (const entry of entries.filter(([key]) => isSwitchKey(key))) await putOne(entry);
  await Promise.all(entries.filter(([key]) => !isSwitchKey(key)).map(putOne));
  return { saved, failed };
}

/** DELETE /api/log/?target_timestamp=: the number of log rows removed. */
export function clearLogsBefore(targetTimestamp: number): Promise<number> {
  return api.delete<number>('/api/log/', { query: { target_timestamp: targetTimestamp } });
}

/** Models that some enabled channel serves (for the unset-models list). */
export function fetchEnabledModels(): Promise<string[]> {
  return api.get<string[]>('/api/channel/models_enabled');
}

export function resetModelRatio(): Promise<void> {
  return api.post<void>('/api/option/rest_model_ratio');
}

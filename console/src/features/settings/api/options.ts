import { queryOptions } from '@tanstack/react-query';
import { ApiError, api } from '../../../lib/api.ts';

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
  /** Why the first refused key was refused, in the reader's language (the request client translates codes). */
  reason?: string;
}

/** PUT /api/option/ once per key (spec 01 section 7). Failures are collected, not thrown. */
export async function saveOptions(entries: readonly (readonly [string, string])[]): Promise<SaveResult> {
  const saved: string[] = [];
  const failed: string[] = [];
  let reason: string | undefined;
  const putOne = async ([key, value]: readonly [string, string]) => {
    try {
      await api.put('/api/option/', { key, value }, { silent: true });
      saved.push(key);
    } catch (error) {
      failed.push(key);
      if (reason === undefined && error instanceof ApiError) reason = error.message;
    }
  };
  for (const entry of entries.filter(([key]) => isSwitchKey(key))) await putOne(entry);
  await Promise.all(entries.filter(([key]) => !isSwitchKey(key)).map(putOne));
  return reason === undefined ? { saved, failed } : { saved, failed, reason };
}

/** The error toast of a save that failed in part or in whole; the server's reason (translated) follows ours. */
export function saveFailureText(result: SaveResult, t: (key: string) => string): string {
  const summary = t(result.saved.length > 0 ? 'save.partialFailed' : 'save.failed');
  return result.reason ? `${summary} (${result.reason})` : summary;
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

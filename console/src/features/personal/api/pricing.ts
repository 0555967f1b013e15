import { api } from '../../../lib/api.ts';

/** One group the user may use: its price ratio and description (GET /api/user/self/groups). */
export interface UsableGroup {
  ratio: number;
  desc: string;
}

export const selfGroupsQueryKey = ['self', 'groups'] as const;
export const selfModelsQueryKey = ['self', 'models'] as const;

export const fetchSelfGroups = () => api.get<Record<string, UsableGroup>>('/api/user/self/groups');

/** Models enabled on some channel of a group the user may use (GET /api/user/models). */
export const fetchSelfModels = () => api.get<string[]>('/api/user/models');

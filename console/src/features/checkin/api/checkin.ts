import type { CheckinResult, CheckinStatus } from '@turnpike/core/contracts/checkin';
import { api } from '../../../lib/api.ts';

export const checkinQueryKey = ['checkin'] as const;

/** The switch, the range and this month's check-ins; fails (silently) while check-ins are off. */
export const fetchCheckin = () => api.get<CheckinStatus>('/api/user/checkin', { silent: true });

export const checkIn = () => api.post<CheckinResult>('/api/user/checkin');

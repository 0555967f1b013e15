import type { BackupCodes, TwoFactorSetup, TwoFactorStatus } from '@turnpike/core/contracts/two-factor';
import { api } from '../../../lib/api.ts';

/** new-api's /api/user/2fa/* (docs/adr/0044). */
export const twoFactorQueryKey = ['two-factor'] as const;
export const fetchTwoFactorStatus = () => api.get<TwoFactorStatus>('/api/user/2fa/status');
export const beginTwoFactorSetup = () => api.post<TwoFactorSetup>('/api/user/2fa/setup');
export const enableTwoFactor = (code: string) =>
  api.post<void>('/api/user/2fa/enable', { code }, { silent: true });
export const disableTwoFactor = (code: string) =>
  api.post<void>('/api/user/2fa/disable', { code }, { silent: true });
export const regenerateBackupCodes = (code: string) =>
  api.post<BackupCodes>('/api/user/2fa/backup_codes', { code }, { silent: true });

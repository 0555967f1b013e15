/** Client-side checks of personal settings (spec 01 section 5). Return a locale key (users namespace) or null. */
import { isEmail } from '../auth/validation.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;

/** Delete own account: the typed text must equal the username. */
export function validateDeleteConfirm(typed: string, username: string): string | null {
  return typed === username ? null : 'personal.validation.deleteConfirm';
}

export function validatePasswordChange(v: {
  original: string;
  password: string;
  password2: string;
}): string | null {
  if (!v.original || !v.password) return 'personal.validation.passwordRequired';
  if (v.password.length < PASSWORD_MIN) return 'personal.validation.passwordMin';
  if (v.password.length > PASSWORD_MAX) return 'personal.validation.passwordMax';
  if (v.password !== v.password2) return 'personal.validation.passwordsDiffer';
  return null;
}

/** Bind email: email and verification code are required. */
export function validateBindEmail(email: string, code: string): string | null {
  if (!email.trim()) return 'personal.validation.emailRequired';
  if (!isEmail(email)) return 'personal.validation.emailInvalid';
  if (!code.trim()) return 'personal.validation.codeRequired';
  return null;
}

export function validateEmailForCode(email: string): string | null {
  if (!email.trim()) return 'personal.validation.emailRequired';
  if (!isEmail(email)) return 'personal.validation.emailInvalid';
  return null;
}

/** Invite earnings transfer: a whole amount of at least one unit (QuotaPerUnit) and no more than is pending. */
export function validateTransfer(text: string, min: number, available: number): string | null {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n)) return 'personal.validation.transferNumber';
  if (n < min) return 'personal.validation.transferMin';
  if (n > available) return 'personal.validation.transferMax';
  return null;
}

/** Warning threshold presets (spec 01 section 9). */
export const THRESHOLD_PRESETS = [100000, 500000, 1000000, 5000000] as const;

export function validateNotification(v: {
  notifyType: 'email' | 'webhook';
  threshold: string;
  webhookUrl: string;
  email: string;
}): string | null {
  const n = Number(v.threshold);
  if (v.threshold.trim() === '' || !Number.isFinite(n) || n <= 0) return 'personal.validation.threshold';
  if (v.notifyType === 'webhook') {
    if (!v.webhookUrl.trim()) return 'personal.validation.webhookRequired';
    if (!/^https?:\/\/\S+$/i.test(v.webhookUrl.trim())) return 'personal.validation.webhookUrl';
  }
  if (v.notifyType === 'email' && v.email.trim() && !isEmail(v.email))
    return 'personal.validation.emailInvalid';
  return null;
}

export const USERNAME_MAX = 12;

/**
 * Self edit (/user/edit): the username is required (at most 12 characters); a new password needs the current one,
 * 8 to 20 characters, and the same text twice.
 */
export function validateSelfEdit(v: {
  username: string;
  original: string;
  password: string;
  password2: string;
}): string | null {
  if (!v.username.trim()) return 'personal.selfEdit.usernameRequired';
  if (v.username.trim().length > USERNAME_MAX) return 'personal.selfEdit.usernameMax';
  if (!v.password && !v.password2) return null;
  if (!v.original) return 'personal.selfEdit.originalRequired';
  return validatePasswordChange(v);
}

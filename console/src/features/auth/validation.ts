/** Client-side checks of the sign-in screens (spec 01 section 5, spec 02 section 5). Return a locale key or null. */

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
export const USERNAME_MAX = 12;

export function validateLogin(v: { username: string; password: string }): string | null {
  if (!v.username.trim() || !v.password) return 'validation.loginRequired';
  return null;
}

export interface RegisterForm {
  username: string;
  password: string;
  password2: string;
  email: string;
  verificationCode: string;
}

export function validateRegister(v: RegisterForm, emailVerification: boolean): string | null {
  if (!v.username.trim() || !v.password) return 'validation.usernamePasswordRequired';
  if (v.username.trim().length > USERNAME_MAX) return 'validation.usernameMax';
  if (v.password.length < PASSWORD_MIN) return 'validation.passwordMin';
  if (v.password.length > PASSWORD_MAX) return 'validation.passwordMax';
  if (v.password !== v.password2) return 'validation.passwordsDiffer';
  if (emailVerification) {
    if (!v.email.trim()) return 'validation.emailRequired';
    if (!isEmail(v.email)) return 'validation.emailInvalid';
    if (!v.verificationCode.trim()) return 'validation.codeRequired';
  }
  return null;
}

export function isEmail(value: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.trim());
}

export function validateResetEmail(email: string): string | null {
  if (!email.trim()) return 'validation.emailRequired';
  if (!isEmail(email)) return 'validation.emailInvalid';
  return null;
}

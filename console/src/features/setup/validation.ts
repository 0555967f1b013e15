/** Setup wizard checks (spec 03 section 5), only while the admin is not yet initialised. Returns a locale key. */
export interface SetupForm {
  username: string;
  password: string;
  confirmPassword: string;
}

export function validateSetup(v: SetupForm, rootInitialised: boolean): string | null {
  if (rootInitialised) return null;
  if (!v.username.trim()) return 'setup.usernameRequired';
  if (v.password.length < 8) return 'setup.passwordMin';
  if (v.password !== v.confirmPassword) return 'setup.passwordsDiffer';
  return null;
}

export type UsageMode = 'external' | 'self' | 'demo';

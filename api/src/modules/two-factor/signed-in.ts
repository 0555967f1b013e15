import { toSessionUser } from '@turnpike/core/contracts/users';
import type { User } from '@turnpike/core/db/schema/users';

/**
 * What every completed sign-in answers: the short user the console keeps, and `require_2fa_setup` when the
 * AdminTwoFactorRequired switch sends this administrator to enrol before anything else.
 */
export function signedInAnswer(user: User, mustEnrol: boolean) {
  return { ...toSessionUser(user), ...(mustEnrol ? { require_2fa_setup: true as const } : {}) };
}

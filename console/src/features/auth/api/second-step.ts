import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import { api } from '../../../lib/api.ts';
import type { SessionUser } from '../../../lib/session.ts';

/** What a completed sign-in answers: the short user, and whether an administrator must enrol first. */
export type SignedIn = SessionUser & { require_2fa_setup?: boolean };

/** The answer of POST /api/user/login: signed in, or a second step is needed (docs/adr/0044). */
export type LoginAnswer = SignedIn | SecondStepRequired;

export const needsSecondStep = (answer: LoginAnswer): answer is SecondStepRequired =>
  (answer as SecondStepRequired).require_2fa === true;

/** POST /api/user/login/2fa: the code of the authenticator app or a backup code completes the sign-in. */
export const completeWithCode = (flowToken: string, code: string) =>
  api.post<SignedIn>('/api/user/login/2fa', { code, flow_token: flowToken }, { silent: true });

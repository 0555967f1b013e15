/**
 * The one door every first step of a sign-in goes through (docs/adr/0044): a right password, or a third party's
 * word (GitHub, OIDC, LinuxDO, WeChat, Telegram), starts a session only for a user with no second factor. A user
 * with a TOTP factor or a passkey gets new-api's `require_2fa` answer instead, and `/user/login/2fa` (a code) or the
 * passkey sign-in completes it; a passkey counts as a second factor, so a user with only passkeys is asked too.
 */
import type { SecondStepRequired } from '@turnpike/core/contracts/two-factor';
import type { User } from '@turnpike/core/db/schema/users';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.ts';
import { type SessionCodec, startSession } from '../../http/session.ts';
import { createPasskeyService } from '../passkeys/passkeys.service.ts';
import { createSignInFlows } from './sign-in-flow.ts';
import { signedInAnswer } from './signed-in.ts';
import { createTwoFactorService } from './two-factor.service.ts';

export const SECOND_STEP_MESSAGE =
  'enter the code of your authenticator app, a backup code, or use a passkey';

export function createSecondStepGate(deps: AppDeps, sessions: SessionCodec) {
  const twoFactor = createTwoFactorService(deps);
  const passkeys = createPasskeyService(deps);
  const flows = createSignInFlows(deps.config.sessionSecret);
  return {
    /**
     * After a first step: either the second step the user owes (no session yet), or the signed-in answer with the
     * session started.
     */
    async proceed(
      request: FastifyRequest,
      reply: FastifyReply,
      user: User,
    ): Promise<
      { readonly pending: SecondStepRequired } | { readonly signedIn: ReturnType<typeof signedInAnswer> }
    > {
      const [totp, passkey] = await Promise.all([
        twoFactor.isEnabled(user.id),
        passkeys.hasPasskeys(user.id),
      ]);
      if (totp || passkey) {
        const flow = flows.begin(request, reply, user);
        return {
          pending: { require_2fa: true, flow_token: flow.token, expires_at: flow.expiresAt, passkey },
        };
      }
      startSession(request, reply, sessions, user);
      return { signedIn: signedInAnswer(user, twoFactor.mustEnrol(user, false)) };
    },
  };
}

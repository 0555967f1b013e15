import { twoFas } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { isAdmin } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { and, eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.ts';

/** What an administrator who must enrol may still call: who they are, and the enrolment itself. */
const ENROLMENT_ROUTES = new Set([
  'GET /api/user/self',
  'GET /api/user/2fa/status',
  'POST /api/user/2fa/setup',
  'POST /api/user/2fa/enable',
]);

export const ENROL_FIRST =
  'administrators must turn on two-factor sign-in first (personal settings, two-factor sign-in)';

/**
 * The AdminTwoFactorRequired switch, checked by the console API's role gate after it has let a user in: an
 * administrator (by session or access token) without an authenticator-app factor is refused everything but the
 * enrolment, with SECOND_FACTOR_REQUIRED, which sends the console to the enrolment page. Costs a read only while
 * the switch is on, and only for administrators.
 */
export function createEnrolmentCheck(deps: AppDeps) {
  return async (request: FastifyRequest, user: User): Promise<void> => {
    if (!isAdmin(user.role) || !deps.options.get('AdminTwoFactorRequired')) return;
    if (ENROLMENT_ROUTES.has(`${request.method} ${request.routeOptions.url}`)) return;
    const [enrolled] = await deps.db
      .select({ id: twoFas.id })
      .from(twoFas)
      .where(and(eq(twoFas.userId, user.id), eq(twoFas.isEnabled, true)));
    if (!enrolled) throw new AppError('SECOND_FACTOR_REQUIRED', ENROL_FIRST);
  };
}

import { redeemSchema } from '@turnpike/core/contracts/redemptions';
import { payRequestSchema, topUpAmountSchema } from '@turnpike/core/contracts/wallet';
import { Role } from '@turnpike/core/domain/users';
import type { EpayParams } from '@turnpike/core/payment/epay';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { stringParams } from '../../http/string-params.ts';
import { parseInput } from '../../http/validate.ts';
import { createWalletService } from './wallet.service.ts';

/** `/api/user/topup`, `/api/user/amount`, `/api/user/pay` and Epay's notify callback. */
export function registerWalletRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const wallet = createWalletService(ctx.deps);
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };

  app.post('/user/topup', signedIn, async (request) => {
    const { key } = parseInput(redeemSchema, request.body);
    return ok(await wallet.redeem(currentUser(request), key), 'redeemed');
  });

  app.post('/user/amount', signedIn, async (request) =>
    ok(wallet.amount(currentUser(request), parseInput(topUpAmountSchema, request.body)), 'success'),
  );

  app.post('/user/pay', signedIn, async (request) => {
    const form = await wallet.pay(currentUser(request), parseInput(payRequestSchema, request.body));
    return { success: true, message: 'success', data: form.params, url: form.url };
  });

  // Epay calls back with a GET query or a form POST. The form parser lives in this child scope only.
  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const answer = async (request: FastifyRequest, params: EpayParams) => {
      const result = await wallet.notify(params);
      if (result === 'fail') request.log.warn({ outTradeNo: params.out_trade_no }, 'epay notify rejected');
      return result;
    };
    scope.get('/user/epay/notify', async (request, reply) =>
      reply.type('text/plain').send(await answer(request, stringParams(request.query))),
    );
    scope.post('/user/epay/notify', async (request, reply) =>
      reply
        .type('text/plain')
        .send(await answer(request, { ...stringParams(request.query), ...stringParams(request.body) })),
    );
  });
}

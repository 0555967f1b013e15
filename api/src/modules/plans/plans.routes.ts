/**
 * Subscription plans in the reference's `/api/subscription` shape (docs/adr/0049): the plans on sale, the caller's
 * subscriptions, buying one through Epay, Stripe or Creem; the administrators' plans and users' subscriptions; the
 * providers' callbacks (`/api/subscription/epay/notify`, `/api/stripe/webhook`, `/api/creem/webhook`), whose
 * signatures are checked over the raw body before anything changes. Subscriptions whose term is over are expired by
 * a job of this role, once a minute, on every replica at once (each one ends at most once).
 */
import {
  billingPreferenceSchema,
  planBindSchema,
  planBodySchema,
  planEpaySchema,
  planPaySchema,
  planStatusSchema,
} from '@turnpike/core/contracts/plans';
import { Role } from '@turnpike/core/domain/closed-sets';
import type { EpayParams } from '@turnpike/core/payment/epay';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser } from '../../http/auth.ts';
import { ok } from '../../http/reply.ts';
import type { RouteContext } from '../../http/route-context.ts';
import { stringParams } from '../../http/string-params.ts';
import { parseId, parseInput } from '../../http/validate.ts';
import { createPlanService, type PlanServiceOptions } from './plans.service.ts';

export interface PlanRouteOptions extends PlanServiceOptions {
  /** How often subscriptions past their end are expired (60 s). */
  readonly expiryIntervalMs?: number;
}

export function registerPlanRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  options: PlanRouteOptions = {},
): void {
  const plans = createPlanService(ctx.deps, { ...ctx.deps.paymentEndpoints, ...options });
  const signedIn = { preHandler: ctx.auth.requireRole(Role.User) };
  const admin = { preHandler: ctx.auth.requireRole(Role.Admin) };
  const paying = { preHandler: [ctx.auth.requireRole(Role.User), ctx.criticalLimit] };

  app.get('/subscription/plans', signedIn, async () => ok(await plans.listOnSale()));

  app.get('/subscription/self', signedIn, async (request) => {
    const user = currentUser(request);
    return ok({
      billing_preference: 'subscription_first',
      subscriptions: (await plans.subscriptionsOf(user.id, true)).map((subscription) => ({ subscription })),
      all_subscriptions: (await plans.subscriptionsOf(user.id, false)).map((subscription) => ({
        subscription,
      })),
    });
  });

  app.put('/subscription/self/preference', signedIn, async (request) => {
    const { billing_preference } = parseInput(billingPreferenceSchema, request.body);
    return ok({ billing_preference });
  });

  app.post('/subscription/epay/pay', paying, async (request) => {
    const input = parseInput(planEpaySchema, request.body);
    const form = await plans.payEpay(currentUser(request), input.plan_id, input.payment_method);
    return { success: true, message: 'success', data: form.params, url: form.url };
  });

  app.post('/subscription/stripe/pay', paying, async (request) =>
    ok(
      await plans.payStripe(currentUser(request), parseInput(planPaySchema, request.body).plan_id),
      'success',
    ),
  );

  app.post('/subscription/creem/pay', paying, async (request) =>
    ok(
      await plans.payCreem(currentUser(request), parseInput(planPaySchema, request.body).plan_id),
      'success',
    ),
  );

  // Administrators
  app.get('/subscription/admin/plans', admin, async () => ok(await plans.listAll()));
  app.post('/subscription/admin/plans', admin, async (request) =>
    ok(await plans.create(parseInput(planBodySchema, request.body).plan), 'created'),
  );
  app.put('/subscription/admin/plans/:id', admin, async (request) =>
    ok(
      await plans.update(
        parseId((request.params as { id: unknown }).id),
        parseInput(planBodySchema, request.body).plan,
      ),
    ),
  );
  app.patch('/subscription/admin/plans/:id', admin, async (request) =>
    ok(
      await plans.setEnabled(
        parseId((request.params as { id: unknown }).id),
        parseInput(planStatusSchema, request.body).enabled,
      ),
    ),
  );
  app.post('/subscription/admin/bind', admin, async (request) => {
    const input = parseInput(planBindSchema, request.body);
    return ok(await plans.grant(parseId(input.user_id, 'user_id'), input.plan_id), 'granted');
  });
  app.get('/subscription/admin/users/:id/subscriptions', admin, async (request) =>
    ok(
      (await plans.subscriptionsOf(parseId((request.params as { id: unknown }).id), false)).map(
        (subscription) => ({
          subscription,
        }),
      ),
    ),
  );
  app.post('/subscription/admin/users/:id/subscriptions', admin, async (request) =>
    ok(
      await plans.grant(
        parseId((request.params as { id: unknown }).id),
        parseInput(planBindSchema, request.body).plan_id,
      ),
      'granted',
    ),
  );
  app.post('/subscription/admin/user_subscriptions/:id/invalidate', admin, async (request) => {
    await plans.cancel(parseId((request.params as { id: unknown }).id));
    return ok(undefined, 'cancelled');
  });

  // The providers' callbacks: bodies kept raw (a signature covers the bytes), in this child scope only.
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: 256 * 1024 },
      (_r, body, done) => done(null, body),
    );
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const raw = (request: FastifyRequest): Buffer =>
      Buffer.isBuffer(request.body)
        ? request.body
        : Buffer.from(typeof request.body === 'string' ? request.body : '');
    const header = (request: FastifyRequest, name: string): string => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : '';
    };
    const answerWebhook = (reply: FastifyReply, outcome: 'ok' | 'forged' | 'refused') =>
      outcome === 'forged'
        ? reply.code(400).send({ success: false, message: 'the signature does not match' })
        : outcome === 'refused'
          ? reply.code(400).send({ success: false, message: 'the payment does not match its order' })
          : reply.send({ success: true, message: '' });

    scope.post('/stripe/webhook', async (request, reply) => {
      const outcome = await plans.stripeWebhook(raw(request), header(request, 'stripe-signature'));
      if (outcome !== 'ok') request.log.warn({ outcome }, 'stripe webhook refused');
      return answerWebhook(reply, outcome);
    });
    scope.post('/creem/webhook', async (request, reply) => {
      const outcome = await plans.creemWebhook(raw(request), header(request, 'creem-signature'));
      if (outcome !== 'ok') request.log.warn({ outcome }, 'creem webhook refused');
      return answerWebhook(reply, outcome);
    });
    const epay = async (request: FastifyRequest, reply: FastifyReply, params: EpayParams) => {
      const result = await plans.notifyEpay(params);
      if (result === 'fail')
        request.log.warn({ outTradeNo: params.out_trade_no }, 'plan epay notify rejected');
      return reply.type('text/plain').send(result);
    };
    scope.get('/subscription/epay/notify', (request, reply) =>
      epay(request, reply, stringParams(request.query)),
    );
    scope.post('/subscription/epay/notify', (request, reply) =>
      epay(request, reply, { ...stringParams(request.query), ...stringParams(request.body) }),
    );
  });

  // Subscriptions past their end are expired once a minute (the relay already stops using them at their end).
  const every = options.expiryIntervalMs ?? 60_000;
  let running: Promise<unknown> | undefined;
  const expire = () => {
    if (running) return;
    running = plans
      .expireDue()
      .catch((error: unknown) => app.log.error({ err: error }, 'expiring subscriptions failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(expire, every);
  timer.unref();
  app.addHook('onReady', async () => expire());
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}

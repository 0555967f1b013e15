/**
 * Stripe Checkout for plans (docs/adr/0049), through Stripe's official library:
 * https://docs.stripe.com/api/checkout/sessions/create and https://docs.stripe.com/webhooks#verify-events.
 * A Checkout Session in `payment` mode carries our order's trade number as `client_reference_id`; Stripe's signed
 * webhook (`checkout.session.completed` with `payment_status: paid`, or `async_payment_succeeded`) completes the
 * order. The secret key and the webhook secret are arguments, never stored here nor returned.
 */
import Stripe from 'stripe';

/** Where the Stripe API is: Stripe's own by default; a local stand-in in tests. */
export interface StripeEndpoint {
  readonly host: string;
  readonly port: number;
  readonly protocol: 'http' | 'https';
}

/** A Stripe client for one secret key (Stripe's library keeps a keep-alive agent per client). */
export function createStripeClient(secretKey: string, endpoint?: StripeEndpoint): Stripe {
  return new Stripe(secretKey, {
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
    ...(endpoint ? { host: endpoint.host, port: endpoint.port, protocol: endpoint.protocol } : {}),
  });
}

/** Currencies Stripe counts in whole units (https://docs.stripe.com/currencies#zero-decimal). */
const ZERO_DECIMAL = new Set(
  'bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf'.split(' ').map((c) => c.toUpperCase()),
);

/** An amount in the currency's smallest unit, as Stripe takes and reports it (12.34 USD: 1234; 500 JPY: 500). */
export function toMinorUnits(amount: number, currency: string): number {
  return ZERO_DECIMAL.has(currency.toUpperCase()) ? Math.round(amount) : Math.round(amount * 100);
}

/** An amount Stripe reported back in the currency's main unit. */
export function fromMinorUnits(amount: number, currency: string): number {
  return ZERO_DECIMAL.has(currency.toUpperCase()) ? amount : amount / 100;
}

export interface PlanCheckout {
  readonly tradeNo: string;
  readonly title: string;
  readonly money: number;
  readonly currency: string;
  /** A Price set up in Stripe for the plan; empty: the amount above is charged. */
  readonly stripePriceId: string;
  readonly successUrl: string;
  readonly cancelUrl: string;
  readonly email?: string;
}

/** Opens a Checkout Session for an order; answers where to send the buyer. Idempotent per trade number. */
export async function createPlanCheckout(
  client: Stripe,
  order: PlanCheckout,
): Promise<{ readonly id: string; readonly url: string }> {
  const session = await client.checkout.sessions.create(
    {
      mode: 'payment',
      client_reference_id: order.tradeNo,
      metadata: { trade_no: order.tradeNo },
      success_url: order.successUrl,
      cancel_url: order.cancelUrl,
      ...(order.email ? { customer_email: order.email } : {}),
      line_items: [
        order.stripePriceId
          ? { price: order.stripePriceId, quantity: 1 }
          : {
              quantity: 1,
              price_data: {
                currency: order.currency.toLowerCase(),
                unit_amount: toMinorUnits(order.money, order.currency),
                product_data: { name: order.title },
              },
            },
      ],
    },
    { idempotencyKey: `checkout-${order.tradeNo}` },
  );
  if (!session.url) throw new Error('Stripe answered a Checkout Session without a url');
  return { id: session.id, url: session.url };
}

/** What a verified Stripe event means for an order. */
export type StripeOrderEvent =
  | {
      readonly kind: 'paid';
      readonly tradeNo: string;
      readonly sessionId: string;
      readonly money: number;
      readonly currency: string;
    }
  | { readonly kind: 'expired'; readonly tradeNo: string }
  | { readonly kind: 'ignored'; readonly type: string };

/**
 * Verifies a webhook's `Stripe-Signature` over the raw body (throws Stripe's `SignatureVerificationError` when it is
 * forged, altered or older than Stripe's tolerance of 300 seconds) and says what it means for an order.
 */
export function readStripeEvent(
  rawBody: string | Buffer,
  signature: string,
  webhookSecret: string,
): StripeOrderEvent {
  const event = Stripe.webhooks.constructEvent(rawBody, signature, webhookSecret);
  if (!event.type.startsWith('checkout.session.')) return { kind: 'ignored', type: event.type };
  const session = event.data.object as Stripe.Checkout.Session;
  const tradeNo = session.client_reference_id ?? session.metadata?.trade_no ?? '';
  if (!tradeNo) return { kind: 'ignored', type: event.type };
  const paid =
    (event.type === 'checkout.session.completed' && session.payment_status === 'paid') ||
    event.type === 'checkout.session.async_payment_succeeded';
  if (paid) {
    const currency = (session.currency ?? '').toUpperCase();
    return {
      kind: 'paid',
      tradeNo,
      sessionId: session.id,
      money: fromMinorUnits(session.amount_total ?? 0, currency),
      currency,
    };
  }
  if (event.type === 'checkout.session.expired' || event.type === 'checkout.session.async_payment_failed')
    return { kind: 'expired', tradeNo };
  return { kind: 'ignored', type: event.type };
}

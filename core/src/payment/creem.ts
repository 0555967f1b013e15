/**
 * Creem checkouts for plans (docs/adr/0049): https://docs.creem.io/api-reference/endpoint/create-checkout and
 * https://docs.creem.io/code/webhooks. A checkout is opened with `POST /v1/checkouts` (`x-api-key`), carrying our
 * trade number as `request_id`; Creem's webhook `checkout.completed` is signed with HMAC-SHA256 of the raw body
 * under the webhook secret, hex, in the `creem-signature` header. Keys are arguments, never stored or returned.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Creem's API (its own by default, the test API in test mode); tests point it at a local stand-in. */
export type CreemEndpoint = string;

const LIVE = 'https://api.creem.io';
const TEST = 'https://test-api.creem.io';

export interface CreemAccount {
  readonly apiKey: string;
  readonly testMode: boolean;
  readonly endpoint?: CreemEndpoint;
}

export interface CreemCheckoutRequest {
  readonly productId: string;
  readonly requestId: string;
  readonly successUrl: string;
  readonly email?: string;
}

/** Opens a checkout for a product; answers its id and the page to send the buyer to. */
export async function createCreemCheckout(
  account: CreemAccount,
  request: CreemCheckoutRequest,
): Promise<{ readonly id: string; readonly url: string }> {
  const base = account.endpoint ?? (account.testMode ? TEST : LIVE);
  const response = await fetch(`${base}/v1/checkouts`, {
    method: 'POST',
    headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      product_id: request.productId,
      request_id: request.requestId,
      success_url: request.successUrl,
      metadata: { trade_no: request.requestId },
      ...(request.email ? { customer: { email: request.email } } : {}),
    }),
    signal: AbortSignal.timeout(20_000),
  });
  if (!response.ok) throw new Error(`Creem answered ${response.status} to a checkout`);
  const body = (await response.json()) as { id?: unknown; checkout_url?: unknown };
  if (typeof body.checkout_url !== 'string' || typeof body.id !== 'string')
    throw new Error('Creem answered a checkout without checkout_url');
  return { id: body.id, url: body.checkout_url };
}

/** The hex HMAC-SHA256 Creem signs a webhook's raw body with. */
export function creemSignature(rawBody: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/** What a Creem webhook means for an order. */
export type CreemOrderEvent =
  | {
      readonly kind: 'paid';
      readonly tradeNo: string;
      readonly orderId: string;
      readonly money: number;
      readonly currency: string;
    }
  | { readonly kind: 'forged' }
  | { readonly kind: 'ignored' };

interface CreemCheckoutObject {
  readonly request_id?: string;
  readonly metadata?: { readonly trade_no?: string };
  readonly order?: {
    readonly id?: string;
    readonly amount?: number;
    readonly currency?: string;
    readonly status?: string;
  };
}

/** Verifies `creem-signature` in constant time and reads a paid checkout; anything else is ignored. */
export function readCreemEvent(rawBody: Buffer, signature: string, secret: string): CreemOrderEvent {
  const expected = Buffer.from(creemSignature(rawBody, secret), 'hex');
  const given = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'forged' };
  let event: { eventType?: string; object?: CreemCheckoutObject };
  try {
    event = JSON.parse(rawBody.toString('utf8')) as typeof event;
  } catch {
    return { kind: 'ignored' };
  }
  if (event.eventType !== 'checkout.completed' || !event.object) return { kind: 'ignored' };
  const checkout = event.object;
  const tradeNo = checkout.request_id ?? checkout.metadata?.trade_no ?? '';
  const order = checkout.order;
  if (!tradeNo || !order || (order.status !== undefined && order.status !== 'paid'))
    return { kind: 'ignored' };
  // Creem's amounts are in cents.
  return {
    kind: 'paid',
    tradeNo,
    orderId: order.id ?? '',
    money: (order.amount ?? 0) / 100,
    currency: (order.currency ?? '').toUpperCase(),
  };
}

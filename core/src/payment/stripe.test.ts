import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { creemSignature, readCreemEvent } from './creem.ts';
import { fromMinorUnits, readStripeEvent, toMinorUnits } from './stripe.ts';

describe('Stripe amounts', () => {
  it("counts in the currency's smallest unit as Stripe's currency page lists it", () => {
    // https://docs.stripe.com/currencies#zero-decimal: 10 USD is 1000; 500 JPY is 500.
    expect(toMinorUnits(10, 'USD')).toBe(1000);
    expect(toMinorUnits(9.99, 'eur')).toBe(999);
    expect(toMinorUnits(500, 'JPY')).toBe(500);
    expect(fromMinorUnits(999, 'USD')).toBe(9.99);
    expect(fromMinorUnits(500, 'KRW')).toBe(500);
  });
});

describe('readStripeEvent', () => {
  const secret = 'whsec_unit';
  const payload = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'checkout.session.async_payment_succeeded',
    data: {
      object: {
        id: 'cs_1',
        object: 'checkout.session',
        client_reference_id: 'SUB1',
        amount_total: 1999,
        currency: 'usd',
        payment_status: 'paid',
      },
    },
  });

  it("reads a paid session signed with Stripe's own test header, and refuses another secret", () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret });
    expect(readStripeEvent(payload, header, secret)).toEqual({
      kind: 'paid',
      tradeNo: 'SUB1',
      sessionId: 'cs_1',
      money: 19.99,
      currency: 'USD',
    });
    expect(() => readStripeEvent(payload, header, 'whsec_other')).toThrow();
  });
});

describe('Creem webhooks', () => {
  it('signs with HMAC-SHA256 hex of the raw body and refuses any other signature', () => {
    const body = Buffer.from(
      JSON.stringify({
        eventType: 'checkout.completed',
        object: { request_id: 'SUB2', order: { id: 'o', amount: 1000, currency: 'EUR', status: 'paid' } },
      }),
    );
    const signature = createHmac('sha256', 'sec').update(body).digest('hex');
    expect(creemSignature(body, 'sec')).toBe(signature);
    expect(readCreemEvent(body, signature, 'sec')).toEqual({
      kind: 'paid',
      tradeNo: 'SUB2',
      orderId: 'o',
      money: 10,
      currency: 'EUR',
    });
    expect(
      readCreemEvent(
        body,
        signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
        'sec',
      ),
    ).toEqual({ kind: 'forged' });
    expect(readCreemEvent(body, 'short', 'sec')).toEqual({ kind: 'forged' });
  });
});

import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The Epay ("易支付") merchant protocol: a form posted to `{PayAddress}/submit.php`, and an asynchronous notify
 * call back to us. Both are signed with MD5 over the non-empty parameters other than `sign` and `sign_type`,
 * sorted by name (byte order) and joined as `k=v&k=v`, with the merchant key appended directly.
 */
export type EpayParams = Record<string, string>;

/** The string Epay signs: sorted, non-empty, unsigned parameters as `k=v&k=v` (values not URL-encoded). */
export function epaySignContent(params: EpayParams): string {
  return Object.keys(params)
    .filter(
      (name) => name !== 'sign' && name !== 'sign_type' && params[name] !== undefined && params[name] !== '',
    )
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
}

/** The lowercase hex MD5 signature of `params` under the merchant key. */
export function epaySign(params: EpayParams, key: string): string {
  return createHash('md5')
    .update(epaySignContent(params) + key, 'utf8')
    .digest('hex');
}

/** Whether `params.sign` is the right signature; compared in constant time. */
export function verifyEpaySign(params: EpayParams, key: string): boolean {
  const given = params.sign;
  if (!given || !key || !/^[0-9a-fA-F]{32}$/.test(given)) return false;
  const expected = Buffer.from(epaySign(params, key), 'hex');
  return timingSafeEqual(expected, Buffer.from(given.toLowerCase(), 'hex'));
}

export interface EpayOrder {
  /** Base address of the Epay site, without a trailing slash. */
  readonly payAddress: string;
  /** Merchant id (EpayId). */
  readonly pid: string;
  /** Merchant key (EpayKey); used to sign, never sent. */
  readonly key: string;
  /** Epay channel: `alipay`, `wxpay`, ... */
  readonly type: string;
  readonly outTradeNo: string;
  readonly notifyUrl: string;
  readonly returnUrl: string;
  /** Product name shown by Epay. */
  readonly name: string;
  /** Money to pay, in the provider's currency. */
  readonly money: number;
}

/** The form the browser posts to Epay to pay an order: target url plus signed fields. */
export function buildEpayForm(order: EpayOrder): { url: string; params: EpayParams } {
  const params: EpayParams = {
    pid: order.pid,
    type: order.type,
    out_trade_no: order.outTradeNo,
    notify_url: order.notifyUrl,
    return_url: order.returnUrl,
    name: order.name,
    money: order.money.toFixed(2),
    device: 'pc',
  };
  params.sign = epaySign(params, order.key);
  params.sign_type = 'MD5';
  return { url: `${order.payAddress.replace(/\/+$/, '')}/submit.php`, params };
}

/** Epay's value of `trade_status` for a paid order. */
export const EPAY_TRADE_SUCCESS = 'TRADE_SUCCESS';

/** The console's payment method names mapped to Epay channel types. */
export function epayTypeOf(method: string): string {
  if (method === 'zfb' || method === 'alipay') return 'alipay';
  if (method === 'wx' || method === 'wxpay') return 'wxpay';
  return method;
}

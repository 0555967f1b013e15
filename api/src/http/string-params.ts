import type { EpayParams } from '@turnpike/core/payment/epay';

/** Flat string parameters of a query or a parsed form (Epay's callbacks); repeated or non-text values are dropped. */
export function stringParams(source: unknown): EpayParams {
  const params: EpayParams = {};
  if (!source || typeof source !== 'object') return params;
  for (const [name, value] of Object.entries(source)) if (typeof value === 'string') params[name] = value;
  return params;
}

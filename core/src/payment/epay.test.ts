import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { minimumAmount, payableMoney, quotaOfUnits, unitsOf } from './amount.ts';
import { buildEpayForm, epaySign, epaySignContent, epayTypeOf, verifyEpaySign } from './epay.ts';

describe('Epay signature', () => {
  it('signs the sorted non-empty parameters except sign and sign_type, with the key appended', () => {
    const params = { type: 'alipay', pid: '1001', money: '7.30', sign_type: 'MD5', sign: 'x', empty: '' };
    expect(epaySignContent(params)).toBe('money=7.30&pid=1001&type=alipay');
    const expected = createHash('md5')
      .update('money=7.30&pid=1001&type=alipay' + 'merchant-key')
      .digest('hex');
    expect(epaySign(params, 'merchant-key')).toBe(expected);
  });

  it('verifies a good signature and rejects a forged or missing one', () => {
    const params: Record<string, string> = {
      pid: '1',
      out_trade_no: 'T1',
      money: '1.00',
      trade_status: 'TRADE_SUCCESS',
    };
    params.sign = epaySign(params, 'k1');
    expect(verifyEpaySign(params, 'k1')).toBe(true);
    expect(verifyEpaySign({ ...params, sign: params.sign.toUpperCase() }, 'k1')).toBe(true);
    expect(verifyEpaySign(params, 'k2')).toBe(false);
    expect(verifyEpaySign({ ...params, money: '100.00' }, 'k1')).toBe(false);
    expect(verifyEpaySign({ ...params, sign: 'nothex' }, 'k1')).toBe(false);
    expect(verifyEpaySign({ pid: '1' }, 'k1')).toBe(false);
    expect(verifyEpaySign(params, '')).toBe(false);
  });

  it('builds the submit form with every field the protocol needs', () => {
    const form = buildEpayForm({
      payAddress: 'https://pay.example.com/',
      pid: '1001',
      key: 'secret',
      type: 'wxpay',
      outTradeNo: 'USR1NOabc1',
      notifyUrl: 'https://gw/api/user/epay/notify',
      returnUrl: 'https://gw/log',
      name: 'TUC10',
      money: 73,
    });
    expect(form.url).toBe('https://pay.example.com/submit.php');
    expect(form.params).toMatchObject({
      pid: '1001',
      money: '73.00',
      device: 'pc',
      sign_type: 'MD5',
      name: 'TUC10',
    });
    expect(JSON.stringify(form)).not.toContain('secret');
    expect(verifyEpaySign(form.params, 'secret')).toBe(true);
  });

  it('maps console methods to Epay types', () => {
    expect(epayTypeOf('zfb')).toBe('alipay');
    expect(epayTypeOf('wx')).toBe('wxpay');
  });
});

describe('top-up money', () => {
  const currency = { price: 7.3, groupRatio: 1, displayInCurrency: true, quotaPerUnit: 500000, minTopUp: 1 };
  it('charges units × Price × group ratio, to the cent', () => {
    expect(payableMoney(unitsOf(10, currency), currency)).toBe(73);
    expect(payableMoney(3, { ...currency, groupRatio: 0.85 })).toBe(18.62);
    expect(quotaOfUnits(10, 500000)).toBe(5_000_000);
  });
  it('takes quota amounts when currency display is off', () => {
    const quota = { ...currency, displayInCurrency: false };
    expect(minimumAmount(quota)).toBe(500000);
    expect(unitsOf(1_500_000, quota)).toBe(3);
    expect(minimumAmount(currency)).toBe(1);
  });
});

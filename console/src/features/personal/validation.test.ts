import { describe, expect, it } from 'vitest';
import {
  validateBindEmail,
  validateDeleteConfirm,
  validateEmailForCode,
  validateNotification,
  validatePasswordChange,
  validateTransfer,
} from './validation.ts';

describe('personal settings validation (spec 01 section 5)', () => {
  it('delete needs the exact username', () => {
    expect(validateDeleteConfirm('Alice', 'alice')).toBe('personal.validation.deleteConfirm');
    expect(validateDeleteConfirm('', 'alice')).toBe('personal.validation.deleteConfirm');
    expect(validateDeleteConfirm('alice', 'alice')).toBeNull();
  });

  it('password change needs both passwords, 8 to 20 characters, and matching entries', () => {
    const ok = { original: 'oldpass12', password: 'newpass12', password2: 'newpass12' };
    expect(validatePasswordChange({ ...ok, original: '' })).toBe('personal.validation.passwordRequired');
    expect(validatePasswordChange({ ...ok, password: '', password2: '' })).toBe(
      'personal.validation.passwordRequired',
    );
    expect(validatePasswordChange({ ...ok, password: 'short7c', password2: 'short7c' })).toBe(
      'personal.validation.passwordMin',
    );
    expect(validatePasswordChange({ ...ok, password: 'x'.repeat(21), password2: 'x'.repeat(21) })).toBe(
      'personal.validation.passwordMax',
    );
    expect(validatePasswordChange({ ...ok, password2: 'newpass13' })).toBe(
      'personal.validation.passwordsDiffer',
    );
    expect(validatePasswordChange(ok)).toBeNull();
  });

  it('bind email needs a valid email and the code', () => {
    expect(validateEmailForCode(' ')).toBe('personal.validation.emailRequired');
    expect(validateEmailForCode('not-an-email')).toBe('personal.validation.emailInvalid');
    expect(validateEmailForCode('a@b.co')).toBeNull();
    expect(validateBindEmail('', '123456')).toBe('personal.validation.emailRequired');
    expect(validateBindEmail('a@b.co', ' ')).toBe('personal.validation.codeRequired');
    expect(validateBindEmail('a@b.co', '123456')).toBeNull();
  });

  it('transfer is a whole amount of at least one unit and at most what is pending', () => {
    expect(validateTransfer('', 500000, 1_000_000)).toBe('personal.validation.transferNumber');
    expect(validateTransfer('1.5', 500000, 1_000_000)).toBe('personal.validation.transferNumber');
    expect(validateTransfer('499999', 500000, 1_000_000)).toBe('personal.validation.transferMin');
    expect(validateTransfer('1000001', 500000, 1_000_000)).toBe('personal.validation.transferMax');
    expect(validateTransfer('500000', 500000, 1_000_000)).toBeNull();
  });

  it('notification needs a positive threshold, a webhook address for webhooks, a valid email if given', () => {
    const ok = { notifyType: 'email' as const, threshold: '500000', webhookUrl: '', email: '' };
    expect(validateNotification(ok)).toBeNull();
    expect(validateNotification({ ...ok, threshold: '0' })).toBe('personal.validation.threshold');
    expect(validateNotification({ ...ok, threshold: 'abc' })).toBe('personal.validation.threshold');
    expect(validateNotification({ ...ok, email: 'nope' })).toBe('personal.validation.emailInvalid');
    const hook = { ...ok, notifyType: 'webhook' as const };
    expect(validateNotification(hook)).toBe('personal.validation.webhookRequired');
    expect(validateNotification({ ...hook, webhookUrl: 'ftp://x' })).toBe('personal.validation.webhookUrl');
    expect(validateNotification({ ...hook, webhookUrl: 'https://hooks.example.com/x' })).toBeNull();
  });
});

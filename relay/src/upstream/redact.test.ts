import { describe, expect, it } from 'vitest';
import { createRedactor } from './redact.ts';

const KEY = 'sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5';

describe('credential redaction', () => {
  const redactor = createRedactor(KEY);

  it('removes the whole key an upstream echoes', () => {
    const text = `Incorrect API key provided: Bearer ${KEY}. You can find your API key at the dashboard.`;
    const shown = redactor.redact(text);
    expect(shown).not.toContain(KEY.slice(8));
    expect(shown).toContain('Incorrect API key provided: Bearer [redacted].');
  });

  it('removes the masked forms providers print', () => {
    for (const masked of [
      'sk-...3kM5',
      'sk-proj-****************************3kM5',
      'sk-pro…I3kM5',
      'Ab3dE5gH...',
    ]) {
      const shown = redactor.redact(`Incorrect API key provided: ${masked}.`);
      expect(shown, masked).toBe('Incorrect API key provided: [redacted].');
    }
  });

  it('removes a prefix or suffix of the key printed alone', () => {
    expect(redactor.redact('key Ab3dE5gH7jK9 is invalid')).toBe('key [redacted] is invalid');
    expect(redactor.redact('key ending 1gI3kM5x')).toBe('key ending 1gI3kM5x');
    expect(redactor.redact('key ending cE1gI3kM5')).toBe('key ending [redacted]');
  });

  it('leaves other text alone, and says so cheaply', () => {
    const text = 'Rate limit reached for gpt-4o in organization org-xyz on tokens per min.';
    expect(redactor.mayContain(text)).toBe(false);
    expect(redactor.redact(text)).toBe(text);
  });

  it('treats every line of a multi-key channel as a credential', () => {
    const other = 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';
    const both = createRedactor(`${KEY}\n${other}`);
    expect(both.redact(`bad key ${other}`)).toBe('bad key [redacted]');
  });

  it('leaves a plain word of a hand-made key alone in an answer', () => {
    const handMade = createRedactor('sk-upstream-e2e-key');
    expect(handMade.redact('the fake upstream answered in pieces')).toBe(
      'the fake upstream answered in pieces',
    );
    expect(handMade.redact('bad key sk-upstream-e2e-key')).toBe('bad key [redacted]');
  });

  it('removes a short key only whole (its body may be a plain word)', () => {
    const short = createRedactor('sk-upstream');
    expect(short.redact('the upstream said sk-upstream is wrong')).toBe(
      'the upstream said [redacted] is wrong',
    );
  });
});

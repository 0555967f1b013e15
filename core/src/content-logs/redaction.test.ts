import { describe, expect, it } from 'vitest';
import {
  capContent,
  createRedactor,
  cutToBytes,
  passesLuhn,
  patternProblem,
  REDACTED,
  RedactionTimeout,
} from './redaction.ts';

describe('the Luhn check', () => {
  // ISO/IEC 7812-1's worked example (79927398713, as Wikipedia's "Luhn algorithm" gives it) is 11 digits: too short
  // for a card. The card networks' published test numbers are (https://docs.stripe.com/testing#cards).
  it.each([
    ['4242424242424242', true],
    ['4000 0566 5566 5556', true],
    ['5555-5555-5555-4444', true],
    ['378282246310005', true],
    ['6011111111111117', true],
    ['4242424242424241', false],
    ['1234567812345678', false],
    ['79927398713', false],
  ])('%s passes: %s', (number, passes) => {
    expect(passesLuhn(number)).toBe(passes);
  });
});

describe('the redaction rules', () => {
  const redact = createRedactor([]);

  it('replaces API keys, email addresses and card numbers, and counts them', () => {
    const text =
      'key sk-ant-api03-AAAAbbbbCCCCdddd0000, mail a.b@c-d.example.org, card 4242 4242 4242 4242, ref 4242 4242 4242 4241';
    const { text: out, count } = redact(text);
    expect(out).toBe(
      `key ${REDACTED.key}, mail ${REDACTED.email}, card ${REDACTED.card}, ref 4242 4242 4242 4241`,
    );
    expect(count).toBe(3);
  });

  it('leaves short sk- words and plain numbers alone', () => {
    expect(redact('the sk-short flag, 12345 and 2026-11-29').count).toBe(0);
  });

  it('applies the operator’s patterns after the built-in rules', () => {
    const custom = createRedactor(['ACME-[0-9]{4}', 'internal\\.corp']);
    expect(custom('ticket ACME-1234 on internal.corp').text).toBe('ticket [redacted] on [redacted]');
  });

  it('stays linear on a long run without a match (no catastrophic backtracking in the built-in rules)', () => {
    const started = performance.now();
    redact(`${'a'.repeat(200_000)}@`);
    redact('4'.repeat(200_000));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('gives up on a pattern that runs too long, rather than stall or keep unredacted text', () => {
    // Star height 1, so the save-time check lets it through; exponential on this input all the same.
    expect(patternProblem('(a|aa)+$')).toBeUndefined();
    const slow = createRedactor(['(a|aa)+$']);
    const started = performance.now();
    expect(() => slow(`${'a'.repeat(60)}!`)).toThrow(RedactionTimeout);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('patterns refused at save', () => {
  it.each([
    ['([a-z]', /not a valid regular expression/],
    ['(a+)+$', /exponential time/],
    ['(x*)*y', /exponential time/],
    ['a*', /matches empty text/],
  ])('%s', (pattern, problem) => {
    expect(patternProblem(pattern)).toMatch(problem);
  });

  it('accepts an ordinary pattern', () => {
    expect(patternProblem('EMP-\\d{6}')).toBeUndefined();
  });
});

describe('the size cap', () => {
  it('cuts at a byte count without splitting a character', () => {
    expect(cutToBytes('ééé', 5)).toBe('éé');
    expect(cutToBytes('a😀b', 4)).toBe('a');
    expect(cutToBytes('abc', 10)).toBe('abc');
  });

  it('keeps a short side whole and gives the rest to the other', () => {
    expect(capContent('p'.repeat(10), 'a'.repeat(100), 50)).toEqual({
      prompt: 'p'.repeat(10),
      answer: 'a'.repeat(40),
      truncated: true,
    });
    expect(capContent('p'.repeat(100), 'a'.repeat(10), 50)).toEqual({
      prompt: 'p'.repeat(40),
      answer: 'a'.repeat(10),
      truncated: true,
    });
    expect(capContent('p'.repeat(100), 'a'.repeat(100), 50)).toEqual({
      prompt: 'p'.repeat(25),
      answer: 'a'.repeat(25),
      truncated: true,
    });
    expect(capContent('pp', 'aa', 50)).toEqual({ prompt: 'pp', answer: 'aa', truncated: false });
  });
});

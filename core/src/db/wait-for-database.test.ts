import { describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './unreachable.ts';
import { type WaitState, waitForDatabase } from './wait-for-database.ts';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const startingUp = () =>
  Object.assign(new Error('the database system is starting up'), { code: '57P03', severity: 'FATAL' });

describe('waiting for the database at start', () => {
  it('waits out an outage, telling once per change of reason, not once per try', async () => {
    const failures = [refused(), refused(), refused(), startingUp(), startingUp()];
    const states: WaitState[] = [];
    let tries = 0;
    const result = await waitForDatabase(
      async () => {
        tries += 1;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'migrated';
      },
      { minDelayMs: 1, maxDelayMs: 2, onStateChange: (state) => states.push(state) },
    );
    expect(result).toBe('migrated');
    expect(tries).toBe(6);
    expect(states.map((s) => (s.state === 'waiting' ? s.reason : s.state))).toEqual([
      'connect ECONNREFUSED 127.0.0.1:5432',
      'the database system is starting up',
      'available',
    ]);
  });

  it('says nothing when the database answers at once', async () => {
    const states: WaitState[] = [];
    await waitForDatabase(async () => 1, { onStateChange: (s) => states.push(s) });
    expect(states).toEqual([]);
  });

  it('throws a misconfiguration at once instead of waiting', async () => {
    const wrongPassword = Object.assign(new Error('password authentication failed for user "x"'), {
      code: '28P01',
    });
    let tries = 0;
    await expect(
      waitForDatabase(async () => {
        tries += 1;
        throw wrongPassword;
      }),
    ).rejects.toBe(wrongPassword);
    expect(tries).toBe(1);
  });

  it('stops waiting when asked to', async () => {
    const controller = new AbortController();
    const waiting = waitForDatabase(
      async () => {
        throw refused();
      },
      {
        minDelayMs: 60_000,
        signal: controller.signal,
        onStateChange: () => controller.abort(new Error('SIGTERM')),
      },
    );
    await expect(waiting).rejects.toThrow('SIGTERM');
  });
});

describe('what counts as the database being unreachable', () => {
  it.each([
    ['a refused connection', refused()],
    ['a reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['an administrator shutdown (pg_terminate_backend)', Object.assign(new Error('x'), { code: '57P01' })],
    ['a server starting up', startingUp()],
    ['a connection exception', Object.assign(new Error('x'), { code: '08006' })],
    [
      'the same wrapped by drizzle',
      Object.assign(new Error('Failed query: select 1\nparams: '), { cause: refused() }),
    ],
    [
      'every address of a name refused',
      Object.assign(new AggregateError([refused(), refused()], ''), { code: 'ECONNREFUSED' }),
    ],
  ])('%s is', (_name, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a syntax error', Object.assign(new Error('syntax error'), { code: '42601' })],
    ['a wrong password', Object.assign(new Error('password authentication failed'), { code: '28P01' })],
    ['a plain bug', new TypeError('undefined is not a function')],
    ['nothing', undefined],
  ])('%s is not', (_name, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
  });
});

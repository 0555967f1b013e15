/**
 * What a quota window adds to a hold on the Redis ledger (docs/adr/0043): holds and settlements one after another
 * (the script's own time and one round trip each, no concurrency) with no window, a daily window, and a rolling
 * 5-hour window (60 buckets summed in the script), on a Redis of its own (its command statistics give the scripts'
 * own time). Not a test: `node bench/window-holds.ts`.
 */
import { randomBytes } from 'node:crypto';
import { type Account, type AccountBase, userAccount, type WindowClaim } from '@turnpike/core/billing/ledger';
import { connectLedgerRedis } from '@turnpike/core/billing/open-ledger';
import { createRedisLedger } from '@turnpike/core/billing/redis-ledger';
import { startTestRedisServer } from '@turnpike/core/testing/redis-server';

const CALLS = 5_000;
const server = await startTestRedisServer();
const redis = await connectLedgerRedis(server.url);
const ledger = createRedisLedger({
  redis,
  keyPrefix: `bench-${randomBytes(4).toString('hex')}:`,
  loadBases: async (accounts) =>
    new Map(
      accounts.map((a): [Account, AccountBase] => [
        a,
        { balance: a.startsWith('u:') ? 1e15 : 0, version: 0 },
      ]),
    ),
});
await ledger.start();
const now = Math.floor(Date.now() / 1000);
const cases: [string, WindowClaim[] | undefined][] = [
  ['no window', undefined],
  [
    'a daily window',
    [{ key: 'u:1|quota:day', slot: now - (now % 86_400), step: 0, slots: 1, limit: 1e15, unit: 'quota' }],
  ],
  [
    'a rolling 5-hour window',
    [{ key: 'u:1|quota:5h', slot: now - (now % 300), step: 300, slots: 60, limit: 1e15, unit: 'quota' }],
  ],
];
for (let round = 0; round < 2; round += 1)
  for (const [name, windows] of cases) {
    await redis.config('RESETSTAT');
    const started = performance.now();
    for (let i = 0; i < CALLS; i += 1) {
      const held = await ledger.hold([userAccount(1)], 10, windows);
      if (!held.ok) throw new Error('refused');
      await ledger.settle(held.hold, 10);
    }
    const perCall = ((performance.now() - started) * 1000) / CALLS;
    // Redis's own time per script (holds and settlements alike), from its command statistics.
    const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
    const scriptUs = stats ? Number(stats[2]) / Number(stats[1]) : Number.NaN;
    if (round === 1)
      process.stdout.write(
        `${name}: ${perCall.toFixed(1)} µs per hold and settlement; Redis ${scriptUs.toFixed(1)} µs per script\n`,
      );
  }
await ledger.close();
redis.disconnect();
await server.close();

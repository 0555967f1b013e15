/**
 * The money, outage and billing integration tests that run on both back ends. `make test` with `TEST_POSTGRES_URL`
 * and `TEST_REDIS_URL` set (CI) runs every test on Postgres and Redis, and these again, at the same time, on the
 * embedded default a newcomer's `make run` uses: PGlite, no Redis, so the in-process ledger, limits and caches and
 * the local settlement spool are exercised with the same invariants
 * (served x price = balance drop = logs, no duplicate, no overdraft). A file added to the money path belongs here.
 */
export const BOTH_BACKENDS: readonly string[] = [
  // the batched writer, the journal and the spool, settlement after a crash
  'relay/src/books/writer.int.test.ts',
  'relay/src/books/settlement-durability.int.test.ts',
  // past the cap of settled calls waiting for the database: a 503, never a call served unbilled
  'relay/src/books/settlement-cap.int.test.ts',
  // served x price <= balance under concurrency; limits; what each endpoint and format is billed
  'relay/src/concurrency.int.test.ts',
  'relay/src/limits.int.test.ts',
  // quota windows: exact under concurrency, reset, rolling, requests, a window and a balance both binding
  'relay/src/quota-windows.int.test.ts',
  // plan allowances: paid before the wallet, served x price = allowance drop + wallet drop = logs, renewed, expired
  'relay/src/plan-allowance.int.test.ts',
  // batch money: the estimate held, each line settled, the rest given back once (issue 42)
  'relay/src/batches/batches.int.test.ts',
  'relay/src/relay.int.test.ts',
  'relay/src/endpoints.int.test.ts',
  'relay/src/audio-billing.int.test.ts',
  'relay/src/billing-compat.int.test.ts',
  // Claude cache writes by duration, at Anthropic's published prices, on every client shape and cloud
  'relay/src/cache-write-duration.int.test.ts',
  // long-context tiers, service tiers and per-request fees at the providers' published prices; the tiered hold
  'relay/src/price-shapes.int.test.ts',
  // tasks, music and video: pre-charge, settle and refund
  'relay/src/tasks/charge.int.test.ts',
  'relay/src/tasks/tasks.int.test.ts',
  'relay/src/tasks/mj-submits.int.test.ts',
  'relay/src/tasks/video/video.int.test.ts',
  'relay/src/tasks/video/converted.int.test.ts',
  // the whole server: billing cases, streams cut and finished, realtime, a write read back at once
  'server/src/relay/billing-cases.int.test.ts',
  'server/src/relay/streaming.int.test.ts',
  'server/src/relay/realtime.int.test.ts',
  'server/src/relay/read-your-writes.int.test.ts',
  'server/src/relay/cache-write-price.int.test.ts',
  'server/src/relay/price-shapes-price.int.test.ts',
  // top-ups: redemption codes and payments
  'api/src/modules/redemptions/redemptions.int.test.ts',
  'api/src/modules/wallet/wallet.int.test.ts',
  // plans: Stripe and Creem webhooks complete an order once; replayed and forged ones change nothing; expiry once
  'api/src/modules/plans/plans.int.test.ts',
  // daily check-ins: one credit a day per user under concurrency
  'api/src/modules/checkin/checkin.int.test.ts',
];
// Not listed because they choose their back end themselves and so run once, in the whole run: the embedded server
// killed under load and restarted (server/src/embedded-crash.int.test.ts) and on a full disk
// (server/src/embedded-full-disk.int.test.ts) always start it on PGlite without Redis; the outages
// (server/src/outage.int.test.ts, cluster-outage) need a Postgres to take away, the one without Redis checking the
// local spool's books.

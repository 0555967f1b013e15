/**
 * `make cluster`: starts the cluster of the cluster tests (one api, three relays behind a round-robin, a Redis of
 * its own) on a fresh database of TEST_POSTGRES_URL, prints where everything listens, and stays up until Ctrl-C,
 * so a developer can try a multi-pod setup on one machine. `make cluster-test` runs the proofs instead.
 */
import { startCluster } from './cluster.ts';
import { createTestDatabaseUrl } from './test-app.ts';

const log = (line: string) => process.stdout.write(`${line}\n`);
if (!process.env.TEST_POSTGRES_URL) {
  log('make cluster needs a Postgres server: TEST_POSTGRES_URL=postgres://user@host:5432/db make cluster');
  process.exit(2);
}
const database = await createTestDatabaseUrl();
const cluster = await startCluster({ databaseUrl: database.url as string });
log(`console and /api : ${cluster.api.url}   (first visit: the setup wizard)`);
log(`relays           : ${cluster.relays.map((r) => r.url).join('  ')}`);
log(`round-robin      : ${cluster.relayUrl}   (point OpenAI clients here, /v1)`);
log(`redis            : ${cluster.redis.url}   prefix ${cluster.keyPrefix}`);
log(`database         : ${database.url}`);
log('Ctrl-C stops everything and drops the database.');
const stop = async () => {
  await cluster.close();
  await database.drop();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

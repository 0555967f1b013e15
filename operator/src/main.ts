/**
 * `node operator/src/main.ts`: loadConfig -> database (migrated) + event bus + Redis -> Kubernetes client
 * (in-cluster service account, or KUBECONFIG) -> Lease -> controllers. Exits on a lost lease or a signal;
 * the Deployment starts it again as a standby.
 */

import * as k8s from '@kubernetes/client-node';
import { loadConfig } from '@turnpike/core/config';
import { createDb } from '@turnpike/core/db/client';
import { isDataDirError } from '@turnpike/core/db/data-dir';
import { migrate } from '@turnpike/core/db/migrate';
import { waitForDatabase } from '@turnpike/core/db/wait-for-database';
import { createEventBus } from '@turnpike/core/events/bus';
import { LOG_REDACT_PATHS } from '@turnpike/core/http/log-redaction';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createKubeClient } from './kube/client.ts';
import { createOperator } from './operator.ts';
import { startHealthServer } from './runtime/health.ts';

const config = loadConfig();
// A Secret's `data` is the operator's own addition to the list every role shares.
const logger = pino({ level: config.logLevel, redact: [...LOG_REDACT_PATHS, '*.data'] });
if (!config.cryptoSecret) {
  logger.fatal(
    'CRYPTO_SECRET (or SESSION_SECRET) is required: the operator seals channel keys the relays open',
  );
  process.exit(1);
}
if (!config.databaseUrl)
  logger.warn('DATABASE_URL is not set: the operator writes an embedded database no relay reads');

// Started while the database is unreachable, the operator waits for it (live, not ready) instead of exiting.
const waitingHealth = await startHealthServer({
  port: config.operator.port,
  registry: new Registry(),
  ready: () => false,
});
const database = await waitForDatabase(
  async () => {
    const opened = await createDb({ url: config.databaseUrl, dataDir: `${config.dataDir}/db` });
    try {
      await migrate(opened);
      return opened;
    } catch (error) {
      await opened.close().catch(() => {});
      throw error;
    }
  },
  {
    onStateChange: (state) =>
      state.state === 'waiting'
        ? logger.warn({ reason: state.reason }, 'the database is unreachable: waiting for it')
        : logger.info({ waitedMs: state.waitedMs }, 'the database answers'),
  },
).catch((error: unknown) => {
  if (isDataDirError(error)) logger.fatal({ dataDir: error.dataDir }, error.message);
  else logger.fatal({ err: error }, 'could not open the database');
  process.exit(isDataDirError(error) ? error.exitCode : 1);
});
await waitingHealth.close();
const bus = await createEventBus({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix });
const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }) : undefined;
redis?.on('error', (error) => logger.warn({ err: error }, 'redis error'));
const kc = new k8s.KubeConfig();
kc.loadFromDefault();

let exiting = false;
async function shutdown(code: number): Promise<void> {
  if (exiting) return;
  exiting = true;
  await operator.stop().catch((error: unknown) => logger.error({ err: error }, 'stop failed'));
  await bus.close();
  redis?.disconnect();
  await database.close();
  process.exit(code);
}

const operator = createOperator(
  {
    db: database.db,
    bus,
    redis,
    redisKeyPrefix: config.redisKeyPrefix,
    cryptoSecret: config.cryptoSecret,
    kube: createKubeClient(kc),
    logger,
  },
  {
    port: config.operator.port,
    ...(config.operator.identity ? { identity: config.operator.identity } : {}),
    leaseNamespace: config.operator.leaseNamespace,
    leaseName: config.operator.leaseName,
    watchNamespace: config.operator.watchNamespace,
    onLostLeadership: () => void shutdown(1),
  },
);
await operator.start();
logger.info(
  { port: operator.port, identity: operator.identity, watchNamespace: config.operator.watchNamespace ?? '*' },
  'operator started',
);
process.on('SIGTERM', () => void shutdown(0));
process.on('SIGINT', () => void shutdown(0));

import { startBootServer } from '@turnpike/api/http/boot-server';
import { createReadiness, installDrainGate, registerHealthRoutes } from '@turnpike/api/http/health';
import type { ChannelProbe } from '@turnpike/core/channels/channel-probe';
import { startPresence } from '@turnpike/core/cluster/presence';
import { loadConfig } from '@turnpike/core/config';
import { dataDirErrorOf, isDataDirError } from '@turnpike/core/db/data-dir';
import { waitForDatabase } from '@turnpike/core/db/wait-for-database';
import { releaseStartupMemory } from '@turnpike/core/runtime/release-memory';
import { createRuntime, DATABASE_CONNECTION_LOST, type Runtime } from '@turnpike/core/runtime/runtime';
import { ensureSecrets } from '@turnpike/core/secrets';
import type { FastifyInstance } from 'fastify';
import { lazyChannelProbe } from './channel-probe.ts';

/**
 * The process of every role (docs/adr/0037), the only place that composes the console API and the relay:
 * configuration, core's runtime (database, migrations), the app of its ROLE, then listen until a signal asks to
 * stop. A process started while the database is unreachable waits for it (live, not ready: http/boot-server.ts) instead
 * of exiting. On SIGTERM (or SIGINT) it drains (docs/adr/0016): /readyz fails and new requests get a 503,
 * requests in flight and streams go on for up to SHUTDOWN_GRACE_SECONDS, then the rest are cut, the batching
 * writer flushes what was settled, and the process exits 0.
 */
// `node server/src/main.ts import --from <source>`: the import of issue 29, for a Job run from the same image.
if (process.argv[2] === 'import')
  process.exit(await (await import('@turnpike/core/import/cli')).runImport(process.argv.slice(3)));
const loaded = loadConfig();
const logger = { level: loaded.logLevel };
const boot = await startBootServer({ port: loaded.port, host: loaded.host, logger });

/** A start that cannot succeed (a locked or unwritable DATA_DIR, a wrong password): say why, and stop. */
async function failToStart(error: unknown): Promise<never> {
  const dataDirError = isDataDirError(error) ? error : dataDirErrorOf(error, loaded.dataDir);
  if (dataDirError) boot.log.fatal({ dataDir: dataDirError.dataDir }, dataDirError.message);
  else boot.log.fatal({ err: error }, 'could not start');
  await boot.close();
  process.exit(dataDirError ? dataDirError.exitCode : 1);
}
const config = await ensureSecrets(loaded).catch(failToStart);
// Failures reported while the runtime starts (an invalid stored option, say) wait until the app's logger exists.
const earlyFailures: { err: unknown; context: string }[] = [];
let reportFailure = (err: unknown, context: string): void => {
  earlyFailures.push({ err, context });
};

/** The runtime and the app of this role; closes what it opened when the database goes away meanwhile. */
async function openAndBuild(): Promise<{ runtime: Runtime; app: FastifyInstance; probe?: ChannelProbe }> {
  const runtime = await createRuntime(config, { onError: (err, context) => reportFailure(err, context) });
  try {
    // ROLE=relay serves only /v1/*; ROLE=all serves the relay beside the console API on the same port. Each role
    // loads only its own modules: a relay pod never imports the console API, an API pod loads the relay's channel
    // probe only when a channel is first tested (their module graphs are most of an idle process's memory,
    // bench/README.md "Memory").
    if (config.role === 'relay') {
      const app = await (await import('@turnpike/relay')).buildRelayApp(runtime.deps, { logger });
      return { runtime, app };
    }
    const probe = lazyChannelProbe(runtime.deps);
    const app = await (await import('@turnpike/api')).buildApp(
      { ...runtime.deps, channelProbe: probe },
      { logger },
    );
    if (config.role === 'all') await (await import('@turnpike/relay')).registerRelay(app, runtime.deps);
    return { runtime, app, probe };
  } catch (error) {
    await runtime.close().catch(() => {});
    throw error;
  }
}

// A rejection nobody handled while starting (what a half-built runtime left behind when the database went away)
// is reported, not a crash: the start is retried. Once serving, the last-resort handler below takes over.
const reportWhileStarting = (err: unknown) => boot.log.error({ err }, 'unhandled rejection while starting');
process.on('unhandledRejection', reportWhileStarting);
const stopWaiting = new AbortController();
const stopWhileWaiting = () => stopWaiting.abort(new Error('asked to stop while starting'));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, stopWhileWaiting);
const started = await waitForDatabase(openAndBuild, {
  signal: stopWaiting.signal,
  onStateChange: (state) => boot.report(state),
}).catch(async (error: unknown) => {
  if (stopWaiting.signal.aborted) {
    boot.log.info('stopped before the database answered');
    await boot.close();
    process.exit(0);
  }
  return failToStart(error);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, stopWhileWaiting);
const { runtime, app, probe } = started;
if (stopWaiting.signal.aborted) {
  // Asked to stop while the app was being built: nothing was served yet.
  await app.close();
  await probe?.close();
  await runtime.close();
  await boot.close();
  process.exit(0);
}
reportFailure = (err, context) =>
  context === DATABASE_CONNECTION_LOST
    ? app.log.warn({ err, context }, 'a database connection was lost; the pool opens another when needed')
    : app.log.error({ err, context }, 'background task failed');
for (const failure of earlyFailures) reportFailure(failure.err, failure.context);

const readiness = createReadiness({
  db: runtime.deps.db,
  redis: runtime.deps.redis,
  degradeAfterReady: config.role !== 'api',
  // The embedded database and the spool of settled calls (no Redis) live there.
  dataDir: runtime.deps.dbKind === 'pglite' || !config.redisUrl ? config.dataDir : undefined,
});
registerHealthRoutes(app, readiness);
await app.ready();
// Every module this role needs is loaded: what the loading freed goes back to the system before the first request.
releaseStartupMemory();
// The collection held the event loop: the connections queued on the boot server meanwhile are taken (and answered
// by it) before it hands the port over, instead of being reset when it closes.
await new Promise((resolve) => setImmediate(resolve));
installDrainGate(app.server, readiness);
const presence = runtime.deps.redis
  ? startPresence({
      redis: runtime.deps.redis,
      keyPrefix: config.redisKeyPrefix,
      role: config.role,
      bus: runtime.deps.bus,
    })
  : undefined;

let stopping = false;
async function stop(reason: { signal?: string; err?: unknown }): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (reason.err) app.log.error({ err: reason.err }, 'stopping after an unexpected error');
  else app.log.info({ signal: reason.signal, graceSeconds: config.shutdownGraceSeconds }, 'draining');
  readiness.drain();
  await presence?.stop();
  // Requests in flight run to their end within the grace period; then their connections are cut, which settles
  // them as a client that left, and the writer flushes on close.
  const cut = setTimeout(() => {
    app.log.warn('grace period over: cutting the requests still running');
    app.server.closeAllConnections();
  }, config.shutdownGraceSeconds * 1000);
  try {
    await app.close();
    // After the app: the API's channel tests run until it closes.
    await probe?.close();
    await runtime.close();
  } finally {
    clearTimeout(cut);
  }
  app.log.info('stopped');
  process.exit(reason.err ? 1 : 0);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop({ signal }));
process.once('uncaughtException', (err) => void stop({ err }));
process.off('unhandledRejection', reportWhileStarting);
process.once('unhandledRejection', (err) => void stop({ err }));

// The boot server hands the port over: a probe in between may be refused once, which no probe counts as death.
await boot.close();
// A listen backlog of 4,096 (Node's default is 511): a relay pod that gets thousands of new connections at once
// (a scale-up, a balancer's reconnect) queues them instead of the kernel dropping SYNs, which clients retry only
// after a second or more (docs/adr/0035). The kernel caps it at net.core.somaxconn.
await app.listen({ port: config.port, host: config.host, backlog: 4096 });
app.log.info(
  {
    database: runtime.deps.dbKind,
    redis: Boolean(config.redisUrl),
    dataDir: config.dataDir,
    role: config.role,
  },
  'turnpike is ready',
);

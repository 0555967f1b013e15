import { loadConfig } from '@turnpike/core/config';
import { ensureSecrets } from '@turnpike/core/secrets';
import { buildRelayApp, registerRelay } from '@turnpike/relay';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { createRuntime } from './runtime.ts';

/** The all-in-one server: configuration, database, migrations, then listen until a signal asks to stop. */
const config = await ensureSecrets(loadConfig());
// Failures reported while the runtime starts (an invalid stored option, say) wait until the logger exists.
const earlyFailures: { err: unknown; context: string }[] = [];
let reportFailure = (err: unknown, context: string): void => {
  earlyFailures.push({ err, context });
};
const runtime = await createRuntime(config, { onError: (err, context) => reportFailure(err, context) });
const logger = { level: config.logLevel };
// ROLE=relay serves only /v1/*; ROLE=all serves the relay beside the console API on the same port.
const app =
  config.role === 'relay'
    ? await buildRelayApp(runtime.deps, { logger })
    : await buildApp(runtime.deps, { logger });
if (config.role === 'all') await registerRelay(app, runtime.deps);
reportFailure = (err, context) => app.log.error({ err, context }, 'background task failed');
for (const failure of earlyFailures) reportFailure(failure.err, failure.context);

closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
  if (err) app.log.error({ err }, 'stopping after an unexpected error');
  else app.log.info({ signal }, 'stopping');
  await app.close();
  await runtime.close();
});

await app.listen({ port: config.port, host: config.host });
app.log.info(
  { database: runtime.deps.dbKind, redis: Boolean(config.redisUrl), dataDir: config.dataDir },
  'turnpike is ready',
);

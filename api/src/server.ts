import { loadConfig } from '@turnpike/core/config';
import { ensureSecrets } from '@turnpike/core/secrets';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { createRuntime } from './runtime.ts';

/** The all-in-one server: configuration, database, migrations, then listen until a signal asks to stop. */
const config = await ensureSecrets(loadConfig());
const runtime = await createRuntime(config);
const app = await buildApp(runtime.deps, { logger: { level: config.logLevel } });

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

/**
 * `make import FROM=<source>` and `node server/src/main.ts import --from <source>`: moves a new-api or one-api
 * gateway into the database Turnpike is configured with (DATABASE_URL, or the embedded one in DATA_DIR).
 * Flags: --dry-run (or DRY_RUN=1), --merge, --skip-logs, --logs-since=<date>, --batch-size=<n>.
 */

import path from 'node:path';
import { parseArgs } from 'node:util';
import { createChannelKeyBox } from '../channels/channel-key.ts';
import { type Config, loadConfig } from '../config.ts';
import { createDb, type Database } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { isNewDataDir } from '../db/pglite-initdb.ts';
import { createEventBus } from '../events/bus.ts';
import { createSecondFactorKeys } from '../second-factors/factor-box.ts';
import { ensureSecrets } from '../secrets.ts';
import { ImportRefusedError, type ImportReport, importGateway } from './importer.ts';
import { formatReport } from './report.ts';
import { describeSource, openSource } from './source.ts';

export interface ImportIo {
  /** Where the report and progress go; standard output by default. */
  readonly write?: (text: string) => void;
  /** An open Turnpike database to write into instead of the configured one (tests). */
  readonly database?: Database;
}

export interface ImportArgs {
  readonly from: string;
  readonly dryRun: boolean;
  readonly merge: boolean;
  readonly skipLogs: boolean;
  readonly logsSince: number | undefined;
  readonly batchSize: number;
}

export function parseImportArgs(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): ImportArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      from: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      merge: { type: 'boolean', default: false },
      'skip-logs': { type: 'boolean', default: false },
      'logs-since': { type: 'string' },
      'batch-size': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const from = values.from ?? env.IMPORT_FROM;
  if (!from)
    throw new Error('say where to import from: --from sqlite:///path/one-api.db, mysql://… or postgres://…');
  let logsSince: number | undefined;
  if (values['logs-since']) {
    const time = Date.parse(values['logs-since']);
    if (Number.isNaN(time)) throw new Error(`--logs-since is not a date: ${values['logs-since']}`);
    logsSince = Math.floor(time / 1000);
  }
  const batchSize = values['batch-size'] ? Number(values['batch-size']) : 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error('--batch-size must be a whole number above 0');
  const dryRunEnv = ['1', 'true', 'yes'].includes((env.DRY_RUN ?? '').toLowerCase());
  return {
    from,
    dryRun: values['dry-run'] || dryRunEnv,
    merge: values.merge,
    skipLogs: values['skip-logs'],
    logsSince,
    batchSize,
  };
}

/**
 * Tells running servers (through Redis, as the console API does) to read again what the import wrote, so the new
 * channels route, the prices apply and keys a relay had found no token for are looked up again at once. Without
 * Redis there is no server to tell: the embedded database serves one process, which must be stopped to import.
 */
async function announce(report: ImportReport, redisUrl: string, keyPrefix: string): Promise<void> {
  const bus = await createEventBus({ redisUrl, keyPrefix });
  try {
    const { users, tokens, channels, options } = report.changed;
    if (options.length > 0) await bus.publish({ type: 'options.changed', keys: options });
    if (channels.length > 0) await bus.publish({ type: 'channels.changed', ids: channels });
    if (users.length > 0) await bus.publish({ type: 'users.changed', ids: users });
    if (tokens.length > 0) await bus.publish({ type: 'tokens.changed', ids: tokens });
  } finally {
    await bus.close();
  }
}

/**
 * The database the import writes into, or for a dry run the one it compares against without writing: a dry run
 * talks to Postgres in a read-only session; in a DATA_DIR that holds no embedded database yet there is nothing to
 * compare against, and none is made (a real import makes and migrates one there).
 */
async function openTarget(config: Config, dryRun: boolean): Promise<Database | undefined> {
  if (config.databaseUrl) {
    const url = dryRun ? readOnlyUrl(config.databaseUrl) : config.databaseUrl;
    return createDb({ url, maxConnections: 2 });
  }
  const dataDir = path.join(config.dataDir, 'db');
  if (dryRun && isNewDataDir(dataDir)) return undefined;
  return createDb({ dataDir });
}

/** The same Postgres URL with every transaction of its sessions read-only. */
function readOnlyUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options');
  url.searchParams.set('options', `${options ? `${options} ` : ''}-c default_transaction_read_only=on`);
  return url.toString();
}

/** Runs one import and answers the exit code: 0 done, 1 failed, 2 refused (the database holds other users). */
export async function runImport(
  argv: readonly string[],
  env: Record<string, string | undefined> = process.env,
  io: ImportIo = {},
): Promise<number> {
  const write = io.write ?? ((text: string) => process.stdout.write(text));
  let report: ImportReport | undefined;
  try {
    const args = parseImportArgs(argv, env);
    const config = loadConfig(env);
    // A dry run seals nothing, so it needs no secret (and creates none in DATA_DIR).
    const secrets = args.dryRun ? undefined : await ensureSecrets(config);
    const database = io.database ?? (await openTarget(config, args.dryRun));
    const source = await openSource(args.from);
    try {
      if (!args.dryRun && database && !io.database) await migrate(database);
      write(`reading ${describeSource(args.from)}${args.dryRun ? ' (dry run)' : ''}\n`);
      report = await importGateway({
        source,
        db: database?.db,
        box: secrets ? createChannelKeyBox(secrets.cryptoSecret) : undefined,
        secondFactorKeys: secrets ? createSecondFactorKeys(secrets.cryptoSecret) : undefined,
        dryRun: args.dryRun,
        merge: args.merge,
        skipLogs: args.skipLogs,
        logsSince: args.logsSince,
        batchSize: args.batchSize,
        progress: (line) => write(`  ${line}\n`),
      });
      write(formatReport(report, describeSource(args.from)));
      if (!args.dryRun && config.redisUrl) await announce(report, config.redisUrl, config.redisKeyPrefix);
      return 0;
    } finally {
      await source.close();
      if (!io.database) await database?.close();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    write(`import failed: ${message}\n`);
    return error instanceof ImportRefusedError ? 2 : 1;
  }
}

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Config, ConfigError, type ResolvedConfig } from './config.ts';

interface StoredSecrets {
  sessionSecret: string;
  cryptoSecret: string;
}

/**
 * Fills in SESSION_SECRET and CRYPTO_SECRET when they are not set: generated once and kept in
 * `<DATA_DIR>/secrets.json` (mode 0600) so a restart keeps sessions and encrypted channel keys readable.
 * Split deployments (ROLE api or relay) must share one secret across replicas, so there they are required.
 */
export async function ensureSecrets(config: Config): Promise<ResolvedConfig> {
  if (config.sessionSecret && config.cryptoSecret) {
    return Object.freeze({
      ...config,
      sessionSecret: config.sessionSecret,
      cryptoSecret: config.cryptoSecret,
    });
  }
  if (config.role !== 'all') {
    throw new ConfigError(
      `ROLE=${config.role} runs beside other replicas: set SESSION_SECRET (and CRYPTO_SECRET) so they all share it`,
    );
  }
  const file = path.join(config.dataDir, 'secrets.json');
  let stored: StoredSecrets | undefined;
  try {
    stored = JSON.parse(await readFile(file, 'utf8')) as StoredSecrets;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (!stored?.sessionSecret || !stored.cryptoSecret) {
    stored = {
      sessionSecret: randomBytes(32).toString('base64url'),
      cryptoSecret: randomBytes(32).toString('base64url'),
    };
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return Object.freeze({
    ...config,
    sessionSecret: config.sessionSecret ?? stored.sessionSecret,
    cryptoSecret: config.cryptoSecret ?? config.sessionSecret ?? stored.cryptoSecret,
  });
}

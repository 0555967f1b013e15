import path from 'node:path';
import { z } from 'zod';
import { REDIS_URL_PATTERN } from './kv/redis-client.ts';

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes', 'on'].includes(v)));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const httpUrl = (name: string, fallback: string) =>
  z.url({ protocol: /^https?$/, error: `${name} must be an http(s) URL` }).default(fallback);

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must start with postgres:// or postgresql://')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(
      REDIS_URL_PATTERN,
      'REDIS_URL must start with redis://, rediss://, redis-sentinel:// or redis-cluster://',
    )
    .optional(),
  REDIS_KEY_PREFIX: z.string().default('turnpike:'),
  SESSION_SECRET: z.string().min(16, 'SESSION_SECRET must be at least 16 characters').optional(),
  CRYPTO_SECRET: z.string().min(16, 'CRYPTO_SECRET must be at least 16 characters').optional(),
  ROLE: z.enum(['all', 'api', 'relay']).default('all'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: flag(false),
  GLOBAL_API_RATE_LIMIT_ENABLE: flag(true),
  GLOBAL_API_RATE_LIMIT: positiveInt(180),
  GLOBAL_API_RATE_LIMIT_DURATION: positiveInt(180),
  GLOBAL_WEB_RATE_LIMIT_ENABLE: flag(true),
  GLOBAL_WEB_RATE_LIMIT: positiveInt(60),
  GLOBAL_WEB_RATE_LIMIT_DURATION: positiveInt(180),
  CRITICAL_RATE_LIMIT_ENABLE: flag(true),
  CRITICAL_RATE_LIMIT: positiveInt(20),
  CRITICAL_RATE_LIMIT_DURATION: positiveInt(1200),
  /** Seconds between full reloads of cached options, a safety net behind change events. */
  SYNC_FREQUENCY: positiveInt(60),
  /** Seconds a stopping process lets requests in flight (streams) run before it cuts them. */
  SHUTDOWN_GRACE_SECONDS: positiveInt(30),
  /** Settled calls a relay keeps waiting for the database before it refuses paid calls (docs/adr/0022). */
  SETTLEMENT_QUEUE_MAX: positiveInt(200_000),
  /**
   * Seconds added to the clock quota windows are counted by (docs/adr/0043), for tests that move a relay past a
   * reset; 0 everywhere else.
   */
  QUOTA_WINDOW_CLOCK_OFFSET_SECONDS: z.coerce.number().int().default(0),
  /** Minutes between automatic tests of every channel (fractions allowed); absent: never. */
  CHANNEL_TEST_FREQUENCY: z.coerce
    .number()
    .positive('CHANNEL_TEST_FREQUENCY must be above 0 minutes')
    .optional(),
  /** Seconds to wait between two channels in a test of all channels. */
  POLLING_INTERVAL: z.coerce.number().min(0, 'POLLING_INTERVAL must not be negative').default(0),
  /** Where Turnstile answers are checked; only tests and air-gapped installs change it. */
  TURNSTILE_VERIFY_URL: httpUrl(
    'TURNSTILE_VERIFY_URL',
    'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  ),
  /** Where GitHub, its API and LinuxDO's Connect answer third-party sign-in; only tests and mirrors change them. */
  GITHUB_OAUTH_URL: httpUrl('GITHUB_OAUTH_URL', 'https://github.com'),
  GITHUB_API_URL: httpUrl('GITHUB_API_URL', 'https://api.github.com'),
  LINUXDO_CONNECT_URL: httpUrl('LINUXDO_CONNECT_URL', 'https://connect.linux.do'),
  /**
   * A release feed answering like GitHub's "latest release" (`{ "tag_name": "v1.2.3" }`), which the console's
   * update check asks from the browser; absent: the console has no update check.
   */
  UPDATE_CHECK_URL: z
    .url({ protocol: /^https?$/, error: 'UPDATE_CHECK_URL must be an http(s) URL' })
    .optional(),
  /** Bearer token `GET /metrics` asks for; absent: the endpoint is open. */
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  /** The operator (`node operator/src/main.ts`): port of /healthz, /readyz and /metrics. */
  OPERATOR_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  /** The operator's identity in its Lease; the pod name in a cluster. */
  POD_NAME: z.string().optional(),
  /** Where the operator's Lease lives; the pod's namespace in a cluster. */
  POD_NAMESPACE: z.string().default('default'),
  /** Only this namespace's custom resources and Secrets; absent: every namespace. */
  WATCH_NAMESPACE: z.string().optional(),
  OPERATOR_LEASE_NAME: z.string().default('turnpike-operator'),
  /**
   * An S3-compatible object store for the files of `/v1/files` (AWS S3, MinIO, R2, ...): its endpoint (absent: AWS's
   * own for the region) and bucket; absent bucket: the files are kept in the database.
   */
  S3_ENDPOINT: z.url({ protocol: /^https?$/, error: 'S3_ENDPOINT must be an http(s) URL' }).optional(),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Bucket in the path (`<endpoint>/<bucket>/<key>`), as MinIO and most self-hosted stores want. */
  S3_FORCE_PATH_STYLE: flag(true),
});

/** Where `/v1/files` keeps bytes when an object store is configured. */
export interface ObjectStoreConfig {
  readonly endpoint: string | undefined;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
  readonly forcePathStyle: boolean;
}

/** A per-IP limit: `max` requests per `windowSeconds`. */
export interface RateLimit {
  readonly enabled: boolean;
  readonly max: number;
  readonly windowSeconds: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Absent: the embedded PGlite database in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** Absent: caches, events and rate limits live in this process. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and channel, so several installations can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Absent: generated once and kept in `dataDir` (see `ensureSecrets`). */
  readonly sessionSecret: string | undefined;
  readonly cryptoSecret: string | undefined;
  readonly role: 'all' | 'api' | 'relay';
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly trustProxy: boolean;
  readonly rateLimits: { readonly api: RateLimit; readonly web: RateLimit; readonly critical: RateLimit };
  readonly syncFrequencySeconds: number;
  /** How long SIGTERM waits for requests in flight before cutting them (docs/adr/0016). */
  readonly shutdownGraceSeconds: number;
  /** Settled calls waiting for the database past which paid calls get a 503 (docs/adr/0022). */
  readonly settlementQueueMax: number;
  /** Seconds added to the quota windows' clock: tests only (docs/adr/0043). */
  readonly quotaWindowClockOffsetSeconds: number;
  /** Minutes between automatic tests of every channel; undefined: no automatic test. */
  readonly channelTestFrequencyMinutes: number | undefined;
  /** Seconds between two channels of a test of all channels. */
  readonly pollingIntervalSeconds: number;
  /** Cloudflare's siteverify endpoint unless TURNSTILE_VERIFY_URL says otherwise. */
  readonly turnstileVerifyUrl: string;
  /** Bases of the GitHub and LinuxDO sign-in endpoints (no trailing slash). */
  readonly oauthUrls: { readonly github: string; readonly githubApi: string; readonly linuxdo: string };
  /** Bearer token of `GET /metrics`; undefined: no authentication. */
  readonly metricsToken: string | undefined;
  /** The release feed of the console's update check; undefined: no update check is offered. */
  readonly updateCheckUrl?: string | undefined;
  /** The object store of `/v1/files`; undefined: the files are kept in the database (docs/adr/0050). */
  readonly objectStore?: ObjectStoreConfig | undefined;
  /** Settings of the Kubernetes operator process (docs/adr/0017). */
  readonly operator: {
    readonly port: number;
    /** Holder identity in the Lease; undefined: the host name. */
    readonly identity: string | undefined;
    readonly leaseNamespace: string;
    readonly leaseName: string;
    /** undefined: every namespace. */
    readonly watchNamespace: string | undefined;
  };
}

/** Config with both secrets known. */
export type ResolvedConfig = Config & { readonly sessionSecret: string; readonly cryptoSecret: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates every setting; the only place in the product that looks at the environment. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    sessionSecret: e.SESSION_SECRET,
    cryptoSecret: e.CRYPTO_SECRET ?? e.SESSION_SECRET,
    role: e.ROLE,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    rateLimits: Object.freeze({
      api: {
        enabled: e.GLOBAL_API_RATE_LIMIT_ENABLE,
        max: e.GLOBAL_API_RATE_LIMIT,
        windowSeconds: e.GLOBAL_API_RATE_LIMIT_DURATION,
      },
      web: {
        enabled: e.GLOBAL_WEB_RATE_LIMIT_ENABLE,
        max: e.GLOBAL_WEB_RATE_LIMIT,
        windowSeconds: e.GLOBAL_WEB_RATE_LIMIT_DURATION,
      },
      critical: {
        enabled: e.CRITICAL_RATE_LIMIT_ENABLE,
        max: e.CRITICAL_RATE_LIMIT,
        windowSeconds: e.CRITICAL_RATE_LIMIT_DURATION,
      },
    }),
    syncFrequencySeconds: e.SYNC_FREQUENCY,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    settlementQueueMax: e.SETTLEMENT_QUEUE_MAX,
    quotaWindowClockOffsetSeconds: e.QUOTA_WINDOW_CLOCK_OFFSET_SECONDS,
    channelTestFrequencyMinutes: e.CHANNEL_TEST_FREQUENCY,
    pollingIntervalSeconds: e.POLLING_INTERVAL,
    turnstileVerifyUrl: e.TURNSTILE_VERIFY_URL,
    oauthUrls: {
      github: e.GITHUB_OAUTH_URL.replace(/\/+$/, ''),
      githubApi: e.GITHUB_API_URL.replace(/\/+$/, ''),
      linuxdo: e.LINUXDO_CONNECT_URL.replace(/\/+$/, ''),
    },
    metricsToken: e.METRICS_TOKEN,
    updateCheckUrl: e.UPDATE_CHECK_URL,
    objectStore: e.S3_BUCKET
      ? Object.freeze({
          endpoint: e.S3_ENDPOINT,
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE,
        })
      : undefined,
    operator: Object.freeze({
      port: e.OPERATOR_PORT,
      identity: e.POD_NAME,
      leaseNamespace: e.POD_NAMESPACE,
      leaseName: e.OPERATOR_LEASE_NAME,
      watchNamespace: e.WATCH_NAMESPACE,
    }),
  });
}

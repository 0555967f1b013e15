import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('runs embedded with no environment at all', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      role: 'all',
      databaseUrl: undefined,
      redisUrl: undefined,
      logLevel: 'info',
    });
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.rateLimits.api).toEqual({ enabled: true, max: 180, windowSeconds: 180 });
    expect(config.rateLimits.critical).toEqual({ enabled: true, max: 20, windowSeconds: 1200 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads the reference's rate-limit variables so deployments carry over", () => {
    const config = loadConfig({
      GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
      GLOBAL_API_RATE_LIMIT: '1000',
      CRITICAL_RATE_LIMIT_DURATION: '60',
    });
    expect(config.rateLimits.api).toEqual({ enabled: false, max: 1000, windowSeconds: 180 });
    expect(config.rateLimits.critical.windowSeconds).toBe(60);
  });

  it('uses SESSION_SECRET for CRYPTO_SECRET when only the first is set', () => {
    const config = loadConfig({ SESSION_SECRET: 'a-long-session-secret' });
    expect(config.cryptoSecret).toBe('a-long-session-secret');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' })).toMatchObject({ databaseUrl: undefined, port: 3000 });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with postgres/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL/],
    [{ ROLE: 'worker' }, /ROLE/],
    [{ SESSION_SECRET: 'short' }, /at least 16/],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

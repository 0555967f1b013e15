/**
 * A `redis-sentinel://` REDIS_URL, which the configuration accepts, reaches Redis for every part that uses it: the
 * event bus (publisher and subscriber) and the runtime's shared connection (limits, affinity, key-value), not only
 * the ledger. A real master and a real Sentinel (`redis-server --sentinel`) of the test's own, on free ports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../events/bus.ts';
import { createRedisBus } from '../events/bus.ts';
import { freePort } from '../testing/free-port.ts';
import { hasRedisServer } from '../testing/redis-server.ts';
import { createTestRuntime } from '../testing/test-runtime.ts';
import { waitFor } from '../testing/wait.ts';
import { createRedisClient } from './redis-client.ts';

const available = hasRedisServer();

describe.skipIf(!available && process.env.CI !== 'true')('Redis through a Sentinel', () => {
  const children: ChildProcess[] = [];
  let dir: string;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-sentinel-'));
    const masterPort = await freePort();
    const sentinelPort = await freePort();
    children.push(
      spawn(
        'redis-server',
        ['--port', String(masterPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      ),
    );
    // A Sentinel rewrites its configuration file, so it gets one of its own.
    const config = path.join(dir, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor turnpike 127.0.0.1 ${masterPort} 1`,
        'sentinel down-after-milliseconds turnpike 5000',
      ].join('\n'),
    );
    children.push(spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' }));
    url = `redis-sentinel://127.0.0.1:${sentinelPort}/turnpike`;
    // Ready once the Sentinel names the master.
    await waitFor(async () => {
      const probe = createRedisClient(`redis://127.0.0.1:${sentinelPort}`, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        const master = (await probe.call('SENTINEL', 'get-master-addr-by-name', 'turnpike')) as
          | string[]
          | null;
        return master?.[1] === String(masterPort) ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    }, 15_000);
  });

  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries a change from one bus to another', async () => {
    const [sender, receiver] = await Promise.all([
      createRedisBus(url, 'sentinel-test:'),
      createRedisBus(url, 'sentinel-test:'),
    ]);
    try {
      const heard: GatewayEvent[] = [];
      receiver.subscribe((event) => {
        heard.push(event);
      });
      const event: GatewayEvent = { type: 'users.changed', ids: [42] };
      // The receiver's subscription is made on connection: publish until it hears.
      await waitFor(async () => {
        await sender.publish(event);
        return heard.some((e) => e.type === 'users.changed') ? true : undefined;
      }, 10_000);
      expect(heard.find((e) => e.type === 'users.changed')).toEqual(event);
    } finally {
      await Promise.all([sender.close(), receiver.close()]);
    }
  });

  it('gives the runtime a shared connection and a bus on the master (REDIS_URL)', async () => {
    const { runtime, close } = await createTestRuntime({ env: { REDIS_URL: url } });
    try {
      const { redis, kv, bus } = runtime.deps;
      await redis?.set('sentinel-test:key', 'value');
      expect(await redis?.get('sentinel-test:key')).toBe('value');
      await kv.set('sentinel-test:kv', 'kept', 60);
      expect(await kv.get('sentinel-test:kv')).toBe('kept');
      expect(await bus.publish({ type: 'tokens.changed', ids: [7] })).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });
});

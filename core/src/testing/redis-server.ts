/**
 * A Redis server of a test's own, on a free loopback port, that the test can stop and start again: for what
 * happens while Redis is away (the shared Redis of TEST_REDIS_URL must keep serving the other test files).
 * Uses the machine's `redis-server`; nothing is kept on disk.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Socket } from 'node:net';
import { freePort } from './free-port.ts';

export interface TestRedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGKILL: connections drop as in a crash). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Whether a `redis-server` binary can be run here. */
export function hasRedisServer(): boolean {
  // Synchronous: a missing binary is an error result here, not an 'error' event nobody listens to.
  return spawnSync('redis-server', ['--version']).status === 0;
}

async function waitForPort(port: number, up: boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open === up) return;
    if (Date.now() > deadline) throw new Error(`redis on ${port} did not come ${up ? 'up' : 'down'}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function startTestRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(port, true);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await waitForPort(port, false);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, close: stop };
}

/**
 * A Postgres cluster and a redis-server of a gateway's own, for the whole cost of a call (bench/cost.ts): started
 * from the host's binaries in a temporary folder, on ports of their own, so the CPU of each can be read from /proc
 * without anyone else's queries in it (the shared test server on 5432 serves every helper's tests).
 *
 * Postgres refuses to run as root; when the bench runs as root the cluster belongs to the `postgres` user
 * (`runuser`), as the Debian package's does. The cluster is initdb's defaults (128 MB shared_buffers, fsync and
 * synchronous commit on) in UTF-8 with the C.UTF-8 collation, like the host's server; Redis runs without
 * persistence (`--save '' --appendonly no`), as the bench measures the gateway's use of it, not its disk.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A port nobody listens on now (the kernel's choice for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The newest Postgres server binaries on the host (Debian's /usr/lib/postgresql/<version>/bin, or pg_config's). */
function postgresBinDir(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => existsSync(path.join(debian, name, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(debian, versions[0], 'bin');
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    return existsSync(path.join(dir, 'postgres')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

const onPath = (command: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** What is missing on this host to run each kind of service, or nothing. */
export function missingServices(): { postgres?: string; redis?: string } {
  return {
    ...(postgresBinDir() ? {} : { postgres: 'no Postgres server binaries (/usr/lib/postgresql/*/bin)' }),
    ...(onPath('redis-server') ? {} : { redis: 'no redis-server on PATH' }),
  };
}

export interface PostgresCluster {
  /** The postmaster: its CPU with its children's is the cluster's (bench/proc-stat.ts). */
  readonly pid: number;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): string;
  stop(): void;
}

const isRoot = () => process.getuid?.() === 0;

/** initdb into a temporary folder and `pg_ctl start`, on a port of its own, listening on 127.0.0.1 only. */
export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(missingServices().postgres);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-cost-pg-'));
  const data = path.join(dir, 'data');
  const asOwner = isRoot() ? ['runuser', '-u', 'postgres', '--'] : [];
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const run = (command: string, args: string[]) => {
    const [file, ...rest] = [...asOwner, path.join(bin, command), ...args] as [string, ...string[]];
    execFileSync(file, rest, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    path.join(dir, 'postgres.log'),
    '-w',
    '-o',
    // COST_POSTGRES_FLAGS adds server settings for a look inside (`-c shared_preload_libraries=pg_stat_statements`).
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${process.env.COST_POSTGRES_FLAGS ?? ''}`,
    'start',
  ]);
  // The first line of postmaster.pid is the postmaster's pid (pg_ctl has gone; the postmaster runs on).
  const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let stopped = false;
  return {
    pid,
    createDatabase(name) {
      execFileSync(path.join(bin, 'createdb'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        name,
      ]);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface RedisServer {
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** Answers PING with +PONG: the server is up. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** A redis-server in the foreground (its pid is this child's), no persistence, on 127.0.0.1 only. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('redis-server did not start');
  const deadline = Date.now() + 10_000;
  while (!(await pings(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error('redis-server did not answer PING within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pid,
    url: `redis://127.0.0.1:${port}`,
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}

/**
 * Where a call's cost goes (issue 40): one build on Postgres (and Redis unless LOOK_REDIS=0), loaded by wrk like
 * bench/cost.ts, with the gateway's V8 CPU profile (summarised by bench/cpu-profile.ts), Postgres's statements by
 * their total time (pg_stat_statements, loaded for this cluster only) and Redis's commands (`INFO commandstats`).
 * `node bench/look-inside.ts [<build>]` (default this checkout); LOOK_SECONDS (15), LOOK_WARMUP (10), LOOK_DIR (the
 * profile's folder). Not a test.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { prepareBuild } from './builds.ts';
import { COST_CHAT_BODY, startGateway } from './cost-gateway.ts';
import { summariseCpuProfile } from './cpu-profile.ts';
import { startFakeUpstream } from './fake-upstream.ts';
import { startPostgresCluster, startRedisServer } from './services.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.LOOK_SECONDS ?? 15);
const warmup = Number(process.env.LOOK_WARMUP ?? 10);
const profileDir = process.env.LOOK_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'turnpike-look-'));
mkdirSync(profileDir, { recursive: true });
process.env.COST_NODE_FLAGS = process.env.LOOK_NODE_FLAGS ?? `--cpu-prof --cpu-prof-dir=${profileDir}`;
process.env.COST_POSTGRES_FLAGS =
  '-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on';

const build = prepareBuild(process.argv[2] ?? root, root);
const upstream = await startFakeUpstream(root);
const postgres = await startPostgresCluster();
const redis = process.env.LOOK_REDIS === '0' ? undefined : await startRedisServer();
const databaseUrl = postgres.createDatabase('look');
const gateway = await startGateway(
  build,
  { databaseUrl, ...(redis ? { redisUrl: redis.url } : {}) },
  upstream.url,
);
const script = path.join(profileDir, 'call.lua');
writeFileSync(
  script,
  `wrk.method = "POST"\nwrk.body = [[${COST_CHAT_BODY}]]\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${gateway.token}"\n`,
);
const wrk = (s: number) =>
  execFileSync(
    'wrk',
    ['-t', '2', '-c', '32', '-d', `${s}s`, '-s', script, `${gateway.url}/v1/chat/completions`],
    {
      encoding: 'utf8',
    },
  );
wrk(warmup);
const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();
await client.query('create extension if not exists pg_stat_statements');
await client.query('select pg_stat_statements_reset()');
if (redis) spawnSync('redis-cli', ['-u', redis.url, 'config', 'resetstat']);
const out = wrk(seconds);
const calls = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
console.log(out);
await new Promise((r) => setTimeout(r, 1000));
const { rows } = await client.query(
  `select calls, round(total_exec_time::numeric, 1) as exec_ms, round(total_plan_time::numeric, 1) as plan_ms, rows,
     left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
   from pg_stat_statements order by total_exec_time + total_plan_time desc limit 15`,
);
console.log(`\nPostgres statements over ${calls} calls (µs per call = ms * 1000 / calls):`);
for (const row of rows)
  console.log(
    `${String(row.calls).padStart(7)} calls ${String(row.exec_ms).padStart(9)} ms exec ${String(row.plan_ms).padStart(7)} ms plan ${(((Number(row.exec_ms) + Number(row.plan_ms)) * 1000) / calls).toFixed(1).padStart(6)} µs/call  ${row.query}`,
  );
await client.end();
if (redis) {
  const stats = spawnSync('redis-cli', ['-u', redis.url, 'info', 'commandstats'], {
    encoding: 'utf8',
  }).stdout;
  console.log(`\nRedis over ${calls} calls:`);
  for (const line of stats.split('\n').filter((l) => l.startsWith('cmdstat_'))) {
    const m = /cmdstat_(\w+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m)
      console.log(
        `${m[1]?.padEnd(14)} ${String(m[2]).padStart(8)} calls ${(Number(m[3]) / calls).toFixed(1)} µs/call`,
      );
  }
}
await gateway.stop();
postgres.stop();
redis?.stop();
upstream.child.kill();
build.release();
const profile = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (profile) console.log(`\n${summariseCpuProfile(path.join(profileDir, profile), 40)}`);

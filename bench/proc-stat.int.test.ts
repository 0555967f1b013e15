import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { clockTicksPerSecond, type ProcStat, processTreeTicks, readProcStat } from './proc-stat.ts';

/** Keeps a CPU busy for `ms` of CPU time, as the kernel's other account of it (getrusage) sees it. */
const burnCpu = (ms: number) => {
  const start = process.cpuUsage();
  let spins = 0;
  while ((process.cpuUsage(start).user + process.cpuUsage(start).system) / 1000 < ms) spins += 1;
  return spins;
};

describe('CPU read from /proc (Linux only)', () => {
  it.runIf(process.platform === 'linux')(
    'agrees with getrusage for this process, in ticks of getconf CLK_TCK',
    () => {
      const hz = clockTicksPerSecond();
      const before = processTreeTicks(process.pid);
      const usage = process.cpuUsage();
      burnCpu(300);
      const used = process.cpuUsage(usage);
      const fromProc = (processTreeTicks(process.pid) - before) / hz;
      const fromRusage = (used.user + used.system) / 1e6;
      // Both count the same time at different granularity: ticks of 1/hz s, each read rounded down.
      expect(Math.abs(fromProc - fromRusage)).toBeLessThanOrEqual(3 / hz + 0.02);
    },
  );

  it.runIf(process.platform === 'linux')(
    "counts a child's CPU while it runs and, once it has ended, through the parent's cutime and cstime",
    async () => {
      const hz = clockTicksPerSecond();
      // The child burns 0.4 s of CPU, says so, then waits (idle) until its stdin closes.
      const child = spawn(process.execPath, [
        '-e',
        'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 400_000); ' +
          'process.stdout.write("burnt"); process.stdin.resume(); process.stdin.on("end", () => process.exit(0))',
      ]);
      // This process's own threads only (not its cutime), so what is left of the tree is the child's.
      const ownTicks = () => {
        const { utime, stime } = readProcStat(process.pid) as ProcStat;
        return utime + stime;
      };
      const before = { tree: processTreeTicks(process.pid), own: ownTicks() };
      await once(child.stdout, 'data');
      // Alive: counted from its own stat line.
      const live = processTreeTicks(process.pid) - before.tree - (ownTicks() - before.own);
      expect(live / hz).toBeGreaterThanOrEqual(0.4 - 2 / hz);
      child.stdin.end();
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      // Ended and waited for: its time has moved into this process's cutime and cstime, none of it lost.
      const ended = processTreeTicks(process.pid) - before.tree - (ownTicks() - before.own);
      expect(ended).toBeGreaterThanOrEqual(live);
      expect(ended / hz).toBeLessThan(5);
    },
  );
});

/**
 * CPU time of processes as the kernel counts it, read from `/proc/<pid>/stat` (proc(5)): the whole cost of a call
 * (bench/cost.ts) adds up the gateway's, every process of its Postgres cluster and its redis-server, which no
 * `process.cpuUsage()` inside the gateway can see.
 *
 * Times are in clock ticks (`getconf CLK_TCK`, 100 on Linux): fields 14-17 of the line, `utime` and `stime` (the
 * process's own user and kernel time, all its threads) and `cutime` and `cstime` (those of its children that have
 * exited and been waited for). A Postgres backend is a child of the postmaster, so a backend that ended during a
 * round is counted in the postmaster's `cutime`/`cstime` and a live one in its own fields.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of one `/proc/<pid>/stat` line that the bench reads. */
export interface ProcStat {
  readonly pid: number;
  /** Field 4. */
  readonly ppid: number;
  /** Fields 14-17, clock ticks. */
  readonly utime: number;
  readonly stime: number;
  readonly cutime: number;
  readonly cstime: number;
}

/**
 * Parses a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may itself hold spaces and
 * parentheses, so the fields are counted from the last `)`.
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  // After the name: field 3 (the state) onwards.
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => {
    const value = Number(rest[n - 3]);
    if (!Number.isSafeInteger(value)) throw new Error(`field ${n} of /proc/<pid>/stat is not a number`);
    return value;
  };
  return {
    pid: Number(line.slice(0, open).trim()),
    ppid: field(4),
    utime: field(14),
    stime: field(15),
    cutime: field(16),
    cstime: field(17),
  };
}

/** A process's CPU time with its waited-for children's, in clock ticks (fields 14-17). */
export const cpuTicksOf = (stat: ProcStat): number => stat.utime + stat.stime + stat.cutime + stat.cstime;

/** The kernel's clock ticks per second, as `getconf CLK_TCK` prints them. */
export function clockTicksPerSecond(): number {
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  if (!Number.isInteger(ticks) || ticks <= 0) throw new Error(`getconf CLK_TCK printed ${ticks}`);
  return ticks;
}

/** The stat of a process, or undefined once it is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every live process whose parent is `pid`. */
function childrenOf(pid: number): ProcStat[] {
  const children: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat?.ppid === pid) children.push(stat);
  }
  return children;
}

/**
 * CPU ticks of a process and its children, the live ones read one by one and the ended ones from the parent's
 * `cutime`/`cstime`: for the postmaster, the whole Postgres cluster (backends, the writers, autovacuum). A child
 * that ends between the two reads is counted twice or not at all: the gateway keeps its connections open, so
 * backends end only when it closes them, not during a measured round.
 */
export function processTreeTicks(pid: number): number {
  const live = childrenOf(pid).reduce((sum, child) => sum + cpuTicksOf(child), 0);
  const own = readProcStat(pid);
  if (!own) throw new Error(`process ${pid} is gone`);
  return cpuTicksOf(own) + live;
}

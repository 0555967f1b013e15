import { describe, expect, it } from 'vitest';
import { cpuTicksOf, parseProcStat } from './proc-stat.ts';

// Lines laid out as proc(5) documents /proc/<pid>/stat (https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html):
// 1 pid, 2 (comm), 3 state, 4 ppid, ... 14 utime, 15 stime, 16 cutime, 17 cstime (clock ticks), 18 priority, ...
// The first is a real line of `cat /proc/self/stat` with fields 14-17 set to 1234, 567, 89 and 10.
const postmaster =
  '22316 (postgres) S 1 22316 16716 0 -1 4194304 97 0 1 0 1234 567 89 10 20 0 1 0 103057 3133440 388 ' +
  '18446744073709551615 94045181231104 94045181250985 140725893003984 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0';
// A command name may hold spaces and parentheses of its own (prctl(PR_SET_NAME) allows any 15 bytes).
const oddName = '4321 (a) b (c d)) R 4000 4321 4321 0 -1 4194560 12 0 0 0 7 3 0 0 20 0 4 0 5000 1 1';

describe('a /proc/<pid>/stat line', () => {
  it('gives the CPU of a process and its ended children as fields 14-17 added up', () => {
    const stat = parseProcStat(postmaster);
    expect(stat).toEqual({ pid: 22316, ppid: 1, utime: 1234, stime: 567, cutime: 89, cstime: 10 });
    expect(cpuTicksOf(stat)).toBe(1900);
  });

  it('counts the fields from the last parenthesis, so a command name with spaces and ")" does not shift them', () => {
    const stat = parseProcStat(oddName);
    expect(stat).toEqual({ pid: 4321, ppid: 4000, utime: 7, stime: 3, cutime: 0, cstime: 0 });
    expect(cpuTicksOf(stat)).toBe(10);
  });

  it('refuses a line that is not one', () => {
    expect(() => parseProcStat('no parentheses here')).toThrow(/not a \/proc/);
    expect(() => parseProcStat('1 (x) S 0 1 1 0 -1 0 0 0 0 0 abc 0 0 0')).toThrow(/field 14/);
  });
});

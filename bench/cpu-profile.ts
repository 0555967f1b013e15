/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof` or the inspector's Profiler): how much of the time the
 * process was idle, and of the rest the functions with the most self time and self time per package or source
 * folder, so `make bench` can say where the relay spends its CPU.
 * `node bench/cpu-profile.ts <file.cpuprofile> [top]` prints the same summary.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/<package>` or the repository folder a script URL belongs to; V8 internals by their name. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return `(${functionName || 'native'})`;
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const source = /\/(core|api|relay|bench)\/src\/(.*)\/[^/]+$/.exec(url) ?? /\/(bench)\/()[^/]+$/.exec(url);
  return source ? `${source[1]}/${source[2]}`.replace(/\/$/, '') : url;
}

export function summariseCpuProfile(file: string, top = 20): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i] as number;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + delta);
    total += delta;
  }
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let idle = 0;
  for (const [id, time] of selfByNode) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    // Idle is the event loop waiting (on the database, the upstream, the client): not CPU the relay spent.
    if (frame.functionName === '(idle)') {
      idle += time;
      continue;
    }
    const shortUrl = frame.url.replace(/^file:\/\/.*?\/(node_modules|core|api|relay|bench)\//, '$1/');
    const name = `${frame.functionName || '(anonymous)'} ${shortUrl ? `${shortUrl}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + time);
    const area = areaOf(frame.url, frame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + time);
  }
  const busy = total - idle;
  const share = (time: number) => `${((time / busy) * 100).toFixed(1).padStart(5)}%`;
  const list = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, time]) => `  ${share(time)}  ${name}`)
      .join('\n');
  return [
    `${(total / 1e6).toFixed(1)} s sampled, ${((idle / total) * 100).toFixed(0)}% idle (waiting); shares below are of the busy time`,
    'self time by area:',
    list(byArea, 15),
    `top ${top} functions by self time:`,
    list(byFunction, top),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: cpu-profile.ts <file.cpuprofile> [top]');
  process.stdout.write(`${summariseCpuProfile(file, Number(process.argv[3] ?? 20))}\n`);
}

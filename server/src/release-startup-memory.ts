import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Gives back to the system what loading the modules left behind, once, before the process serves (bench/README.md
 * "Memory"). The loader's garbage is dead by then, but V8 keeps the pages it freed pooled for reuse (`pooled: 88 MB`
 * in `--trace-gc` of an idle relay), and its memory reducer, which would return them, keeps waiting while the idle
 * process's timers allocate ("Memory reducer: high alloc"). One memory-reducing collection (V8's last-resort
 * flavour, ~30-100 ms with nothing yet to serve) releases the pool: an idle relay ~200 -> ~130 MiB. The collector is
 * taken from a context of its own, so `gc` is not left on the global object for other code.
 */
export function releaseStartupMemory(): void {
  setFlagsFromString('--expose-gc');
  // A Node.js that no longer hands it out this way starts as before, with the memory kept (the test says so).
  const collect = runInNewContext("typeof gc === 'function' ? gc : undefined") as Collect | undefined;
  setFlagsFromString('--no-expose-gc');
  collect?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's collector as `--expose-gc` hands it out. */
export type Collect = (options?: {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}) => void;

let taken: Collect | undefined | null = null;

/**
 * V8's collector, for a process or thread that gives memory back at a moment it knows is quiet; undefined when this
 * Node.js no longer hands it out this way (the caller then keeps the memory, nothing else changes). It is taken
 * from a context of its own, so `gc` is never left on the global object for other code.
 */
export function collector(): Collect | undefined {
  if (taken === null) {
    setFlagsFromString('--expose-gc');
    taken = runInNewContext("typeof gc === 'function' ? gc : undefined") as Collect | undefined;
    setFlagsFromString('--no-expose-gc');
  }
  return taken;
}

/**
 * Gives back to the system what loading the modules left behind, once, before the process serves (bench/README.md
 * "Memory", docs/adr/0038). The loader's garbage is dead by then, but V8 keeps the pages it freed pooled for reuse
 * (`pooled: 88 MB` in `--trace-gc` of an idle relay), and its memory reducer, which would return them, keeps
 * waiting while the idle process's timers allocate ("Memory reducer: high alloc"). One memory-reducing collection
 * (V8's last-resort flavour, ~30-100 ms with nothing yet to serve) releases the pool: an idle relay ~200 -> ~130 MiB.
 */
export function releaseStartupMemory(): void {
  collector()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

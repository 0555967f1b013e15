/**
 * The embedded database's own thread (started by pglite-thread.ts): it owns the PGlite instance, whose queries run
 * synchronously in WebAssembly on the thread that owns it, so the process's event loop (requests, streams) never
 * waits for them. It answers the main thread's requests one message each; ordering and isolation are PGlite's own:
 * every query outside a transaction, and every transaction as a whole, takes PGlite's transaction lock, and a
 * transaction's statements arrive here in order and run on its handle only.
 */

import { readFileSync } from 'node:fs';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { PGlite, type QueryOptions, type Transaction } from '@electric-sql/pglite';
import { collector } from '../runtime/release-memory.ts';
import { serializeError } from './pglite-errors.ts';
import { pgliteOptionsOf } from './pglite-options.ts';
import type { ThreadReply, ThreadRequest, ThreadSetup } from './pglite-thread.ts';

function portToMain(): MessagePort {
  if (!parentPort) throw new Error('pglite-worker.ts runs as a worker thread of pglite-thread.ts');
  return parentPort;
}
const port = portToMain();
const setup = workerData as ThreadSetup;

const reply = (message: ThreadReply) => port.postMessage(message);
const fail = (id: number, error: unknown) => reply({ id, ok: false, error: serializeError(error) });

/**
 * The parsers of a query: the main thread names the type ids it wants as Postgres's text (drizzle's driver passes
 * parsers that keep dates, timestamps, intervals and their arrays as text, and a function cannot cross threads).
 */
const keepText = (value: string) => value;
const parserSets = new Map<string, Record<number, (value: string) => unknown>>();
function optionsOf(request: { rowMode?: 'array' | 'object'; textTypes?: number[] }): QueryOptions {
  const options: QueryOptions = {};
  if (request.rowMode) options.rowMode = request.rowMode;
  if (request.textTypes) {
    const key = request.textTypes.join(',');
    let parsers = parserSets.get(key);
    if (!parsers) {
      parsers = Object.fromEntries(request.textTypes.map((type) => [type, keepText]));
      parserSets.set(key, parsers);
    }
    options.parsers = parsers;
  }
  return options;
}

/**
 * Full collections when the thread has gone quiet. A new database is made by a second WebAssembly instance
 * (`initdb`) whose memory, ~350 MiB resident, is garbage once it is done (a new data folder is now made in a
 * process of its own, pglite-initdb.ts; an in-memory database is still made here), and the boot's migrations and a
 * console page's large result leave more; in the main thread the next requests' allocations had it collected, but this
 * thread allocates next to nothing while idle, so V8 kept it for good (measured: an idle all-in-one process at
 * 514-659 MiB instead of ~260). So: one collection once the database is open, and one after each busy spell, when
 * a whole period has passed without a statement (a few ms of this thread's time, never the event loop's).
 */
const QUIET_PERIOD_MS = 2_000;
function collectGarbage(): void {
  collector()?.();
}
let busySinceCollection = false;
let busyThisPeriod = false;
function collectWhenQuiet(): void {
  setInterval(() => {
    if (busySinceCollection && !busyThisPeriod) {
      collectGarbage();
      busySinceCollection = false;
    }
    busyThisPeriod = false;
  }, QUIET_PERIOD_MS).unref();
}

type Statement = Extract<ThreadRequest, { op: 'query' | 'exec' }>;

async function runStatement(request: Statement, on: PGlite | Transaction): Promise<void> {
  try {
    const value =
      request.op === 'query'
        ? await on.query(request.sql, request.params, optionsOf(request))
        : await on.exec(request.sql, optionsOf({}));
    reply({ id: request.id, ok: true, value });
  } catch (error) {
    fail(request.id, error);
  }
}

/** The statements of one open transaction, in the order the main thread sent them. */
class TransactionQueue {
  private readonly waiting: ThreadRequest[] = [];
  private wake: (() => void) | undefined;
  push(request: ThreadRequest): void {
    this.waiting.push(request);
    this.wake?.();
    this.wake = undefined;
  }
  async next(): Promise<ThreadRequest> {
    for (;;) {
      const request = this.waiting.shift();
      if (request) return request;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

/** Thrown inside PGlite's transaction callback to have it roll back. */
const ROLLBACK = Symbol('rollback');
const transactions = new Map<number, TransactionQueue>();
let lastTransaction = 0;

function begin(client: PGlite, beginId: number): void {
  const txId = ++lastTransaction;
  const queue = new TransactionQueue();
  transactions.set(txId, queue);
  let endId: number | undefined;
  client
    .transaction(async (tx) => {
      reply({ id: beginId, ok: true, value: txId });
      for (;;) {
        const request = await queue.next();
        if (request.op === 'end') {
          endId = request.id;
          if (!request.commit) throw ROLLBACK;
          return;
        }
        if (request.op === 'query' || request.op === 'exec') await runStatement(request, tx);
        else fail(request.id, new Error(`${request.op} is not a statement of a transaction`));
      }
    })
    .then(
      () => reply({ id: endId as number, ok: true, value: undefined }),
      (error: unknown) => {
        if (error === ROLLBACK) reply({ id: endId as number, ok: true, value: undefined });
        // BEGIN failed (endId unset) or COMMIT did: the caller waiting for that step is told.
        else fail(endId ?? beginId, error);
      },
    )
    .finally(() => transactions.delete(txId));
}

async function main(): Promise<void> {
  const options = pgliteOptionsOf(setup);
  let client: PGlite;
  try {
    if (setup.loadDataDir !== undefined) options.loadDataDir = new Blob([readFileSync(setup.loadDataDir)]);
    client = setup.dataDir === undefined ? new PGlite(options) : new PGlite(setup.dataDir, options);
    await client.waitReady;
  } catch (error) {
    reply({ id: 0, ok: false, error: serializeError(error) });
    return;
  }
  collectGarbage();
  collectWhenQuiet();
  port.on('message', (request: ThreadRequest) => {
    busySinceCollection = true;
    busyThisPeriod = true;
    if ('tx' in request && request.tx !== undefined) {
      const queue = transactions.get(request.tx);
      if (queue) queue.push(request);
      else fail(request.id, new Error('the transaction has ended'));
      return;
    }
    switch (request.op) {
      case 'query':
      case 'exec':
        void runStatement(request, client);
        return;
      case 'begin':
        begin(client, request.id);
        return;
      case 'close':
        client.close().then(
          () => {
            reply({ id: request.id, ok: true, value: undefined });
            port.close();
          },
          (error: unknown) => fail(request.id, error),
        );
        return;
      case 'end':
        fail(request.id, new Error('end without a transaction'));
        return;
    }
  });
  reply({ id: 0, ok: true, value: undefined });
}

await main();

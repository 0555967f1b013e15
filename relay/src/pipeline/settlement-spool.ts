/**
 * The local spool of settled calls (docs/adr/0022), for a relay without Redis (the embedded default, or one
 * process on Postgres): every record is appended to `DATA_DIR/settlements/<journal>.jsonl` with one write before
 * the writer queues it, so a process killed before its next flush (SIGKILL, an OOM kill, a database outage that
 * outlasts it) leaves its unwritten calls on disk. At the next start they are written (exactly once: the journal's
 * mark in the database skips what was written before) before any balance is read, and the file is removed.
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '@turnpike/core/db/client';
import { type SettlementRecord, writeRecords } from './write-records.ts';

const SUFFIX = '.jsonl';
/** A spool whose every record is written is emptied once it grows past this. */
const EMPTY_PAST_BYTES = 4 * 1024 * 1024;

export interface SettlementSpool {
  /** Appends one record, as JSON text. */
  append(text: string): void;
  /** Everything appended so far is in the database: the file may be emptied. */
  allWritten(): void;
  /** Closes the file; removes it when everything was written. */
  close(allWritten: boolean): Promise<void>;
}

export function openSettlementSpool(dir: string, journal: string): SettlementSpool {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${journal}${SUFFIX}`);
  const fd = openSync(file, 'a');
  return {
    append(text) {
      writeSync(fd, `${text}\n`);
    },
    allWritten() {
      if (fstatSync(fd).size > EMPTY_PAST_BYTES) ftruncateSync(fd, 0);
    },
    async close(allWritten) {
      closeSync(fd);
      if (allWritten) await rm(file, { force: true });
    },
  };
}

/**
 * Writes the spools other (earlier) processes left in `dir`, in batches, and removes each once written. A line cut
 * short by the crash is skipped (it was never acknowledged to anyone but the client). Returns the records written.
 */
export async function recoverSettlementSpools(db: Db, dir: string, except: string): Promise<number> {
  let written = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith(SUFFIX) || name === `${except}${SUFFIX}`) continue;
    const file = path.join(dir, name);
    const records: SettlementRecord[] = [];
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as SettlementRecord);
      } catch {
        // The last line of a process killed mid-write.
      }
    }
    for (let i = 0; i < records.length; i += 1000)
      written += (await writeRecords(db, records.slice(i, i + 1000))).written;
    await rm(file, { force: true });
  }
  return written;
}

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
/** The size of the line `hasRoom` tries: a record with a long log line is about this big. */
const PROBE_BYTES = 4096;

export interface SettlementSpool {
  /**
   * Appends one record, as JSON text; throws when the disk cannot take it (ENOSPC), leaving nothing of it behind
   * (a later line would be glued to a partial one and lost with it at recovery).
   */
  append(text: string): void;
  /** Whether a record of a few kilobytes would fit now (tried with a blank line, then taken back). */
  hasRoom(): boolean;
  /** Everything appended so far is in the database: the file may be emptied. */
  allWritten(): void;
  /** Closes the file; removes it when everything was written. */
  close(allWritten: boolean): Promise<void>;
}

export function openSettlementSpool(dir: string, journal: string): SettlementSpool {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${journal}${SUFFIX}`);
  const fd = openSync(file, 'a');
  let size = fstatSync(fd).size;
  /** Writes all of `line` or, when the disk refuses part of it, takes back what was written and throws. */
  const appendWhole = (line: Buffer) => {
    let written = 0;
    try {
      while (written < line.length) written += writeSync(fd, line, written);
    } catch (error) {
      if (written > 0) ftruncateSync(fd, size);
      throw error;
    }
    size += line.length;
  };
  return {
    append(text) {
      appendWhole(Buffer.from(`${text}\n`));
    },
    hasRoom() {
      const before = size;
      try {
        // Blank lines are skipped at recovery; this one is removed at once anyway.
        appendWhole(Buffer.from(`${' '.repeat(PROBE_BYTES - 1)}\n`));
      } catch {
        return false;
      }
      ftruncateSync(fd, before);
      size = before;
      return true;
    },
    allWritten() {
      if (size > EMPTY_PAST_BYTES) {
        ftruncateSync(fd, 0);
        size = 0;
      }
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
      if (line.trim() === '') continue;
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

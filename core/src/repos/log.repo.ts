import type { Executor } from '../db/client.ts';
import { logs, type NewLog } from '../db/schema/index.ts';
import { LogType } from '../domain/logs.ts';

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Writes of single log rows from the console side (top-ups, admin edits, bonuses); the relay batches its own. */
export function createLogRepo(db: Executor) {
  return {
    async insert(row: Omit<NewLog, 'createdAt'> & { createdAt?: number }): Promise<void> {
      await db.insert(logs).values({ createdAt: nowSeconds(), ...row });
    },
    async system(userId: number, username: string, content: string): Promise<void> {
      await db
        .insert(logs)
        .values({ userId, username, content, type: LogType.System, createdAt: nowSeconds() });
    },
    async manage(userId: number, username: string, content: string): Promise<void> {
      await db
        .insert(logs)
        .values({ userId, username, content, type: LogType.Manage, createdAt: nowSeconds() });
    },
  };
}

export type LogRepo = ReturnType<typeof createLogRepo>;

/**
 * What the video tests read of the gateway's books: a payer with a key and an SDK client on the relay, a user's
 * balance and the wait for it to settle, and the upstream's id of a gateway task.
 */
import { tasks, users } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import type { RelayTestApp } from '../../../testing/relay-test-app.ts';
import { sleep, waitFor } from '../../../testing/wait.ts';
import { POLL_INTERVAL_MS } from '../../poller.ts';
import { taskPollerOf } from '../../register.ts';

/** A payer's balance unless a test says otherwise: $20. */
export const VIDEO_TEST_QUOTA = 10_000_000;

export function videoBooks(app: () => RelayTestApp, baseURL: () => string) {
  const db = () => app().runtime.deps.db;

  async function payer(fields: { quota?: number; group?: string } = {}) {
    const user = await app().seedUser({
      quota: fields.quota ?? VIDEO_TEST_QUOTA,
      ...(fields.group ? { group: fields.group } : {}),
    });
    const token = await app().seedToken(user.id);
    const key = `sk-${token.key}`;
    return { user, token, key, client: new OpenAI({ apiKey: key, baseURL: baseURL(), maxRetries: 0 }) };
  }

  async function quotaOfUser(id: number): Promise<number> {
    const [row] = await db().select({ quota: users.quota }).from(users).where(eq(users.id, id));
    return row?.quota ?? Number.NaN;
  }

  const settled = (id: number, expected: number) =>
    waitFor(async () => ((await quotaOfUser(id)) === expected ? true : undefined));

  async function upstreamIdOf(id: string): Promise<string> {
    const [row] = await db().select().from(tasks).where(eq(tasks.taskId, id));
    if (!row) throw new Error(`no task ${id}`);
    return (row.properties as { upstream_id: string }).upstream_id;
  }

  return { db, payer, quotaOfUser, settled, upstreamIdOf };
}

/**
 * Restarts the relay's poller at its default interval, so its next pass is a whole interval ({@link POLL_INTERVAL_MS})
 * away: whatever a read sees before then, the poller did not bring.
 */
export async function restartPoller(relay: FastifyInstance): Promise<void> {
  const poller = taskPollerOf(relay);
  await poller.stop();
  poller.start();
}

/**
 * Milliseconds from `finish` (the upstream finishing a job) to the first read that sees it finished, reading every
 * 50 ms; fails when no read sees it within half a poll interval.
 */
export async function msUntilSeen(finish: () => void, isSeen: () => Promise<boolean>): Promise<number> {
  finish();
  const finishedAt = Date.now();
  const deadline = finishedAt + POLL_INTERVAL_MS / 2;
  while (!(await isSeen())) {
    if (Date.now() > deadline) throw new Error('no read saw the finished video within half a poll interval');
    await sleep(50);
  }
  return Date.now() - finishedAt;
}

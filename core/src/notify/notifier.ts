/**
 * Notices to users and to root (reference §9.5): a user whose balance falls below their warning threshold, root
 * when a channel is switched off or on automatically and when a test of all channels ends.
 *
 * - A low-balance notice is sent once per crossing: the batching writer reports each user's balance before and
 *   after the debit it committed (one row-locked update per flush), so exactly one transaction, in one process,
 *   sees a balance go from at or above the threshold to below it. A top-up and a new crossing make a new notice.
 * - Delivery never blocks a relay call: notices queue in memory and are sent in the background, by email
 *   (`notification_email`, else the account's address) or by webhook (a JSON body signed with HMAC-SHA256 of
 *   `webhook_secret` in `X-Webhook-Signature`), retried with backoff.
 * - At most `limitPerHour` notices of one type reach one user an hour (as the reference's NOTIFY_LIMIT_COUNT).
 * - A webhook goes out through the guarded client (`net/guarded-fetch.ts`): an address in the gateway's own
 *   network is refused unless root allows its range, and no redirect is followed.
 * - A notice that cannot be delivered is logged in full and written as a system log row root and the user see in
 *   the usage logs, saying only what the user may know (never an address or the state of a port).
 */
import { createHmac } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { parseUserSetting } from '../contracts/users.ts';
import type { Db } from '../db/client.ts';
import { logs } from '../db/schema/logs.ts';
import { users } from '../db/schema/users.ts';
import { LogType } from '../domain/logs.ts';
import { Role } from '../domain/users.ts';
import type { KvStore } from '../kv/kv.ts';
import { escapeHtml, type Mailer } from '../mail/mailer.ts';
import {
  createGuardedFetch,
  GuardedFetchError,
  outboundPolicyOf,
  type ResolveHost,
} from '../net/guarded-fetch.ts';
import type { OptionReader } from '../options/registry.ts';

export type NoticeType = 'quota_exceed' | 'channel_update' | 'channel_test';

export interface Notice {
  readonly type: NoticeType;
  readonly title: string;
  readonly content: string;
}

/** A user's balance before and after a debit the writer committed, with the settings the row holds. */
export interface BalanceChange {
  readonly userId: number;
  readonly before: number;
  readonly after: number;
  readonly setting: string;
}

export interface Notifier {
  /** Finds the users whose balance crossed their threshold and queues their notices. */
  balancesLowered(changes: readonly BalanceChange[]): void;
  /** Queues a notice to the root user (by email). */
  notifyRoot(notice: Notice): void;
  /** Resolves when every queued notice has been delivered or given up (tests, shutdown). */
  idle(): Promise<void>;
}

export interface NotifierOptions {
  readonly db: Db;
  readonly options: OptionReader;
  readonly mailer: Mailer;
  readonly kv: KvStore;
  readonly log: { warn(object: unknown, message: string): void };
  /** Waits before each retry; default 1 s, 5 s, 25 s. */
  readonly retryDelaysMs?: readonly number[];
  readonly limitPerHour?: number;
  /** Resolves webhook host names (tests); default the system resolver. */
  readonly resolveHost?: ResolveHost;
}

/** The threshold a user is warned at: their own setting, else `QuotaRemindThreshold`. */
export function warningThreshold(setting: string, fallback: number): number {
  const own = parseUserSetting(setting).quota_warning_threshold;
  return typeof own === 'number' && own > 0 ? own : fallback;
}

/** Whether a debit took a balance from at or above the threshold to below it. */
export function crossedThreshold(change: BalanceChange, threshold: number): boolean {
  return change.before >= threshold && change.after < threshold;
}

/** The webhook body and its signature (hex HMAC-SHA256 of the body with the secret; none without a secret). */
export function signedWebhook(notice: Notice, secret: string, now: number) {
  const body = JSON.stringify({
    type: notice.type,
    title: notice.title,
    content: notice.content,
    values: [],
    timestamp: Math.floor(now / 1000),
  });
  const signature = secret ? createHmac('sha256', secret).update(body).digest('hex') : undefined;
  return { body, signature };
}

/**
 * What a user may read of a failed delivery: the guarded client's message, else a plain sentence (a mail error
 * can name the SMTP server's address; the server log has it).
 */
function safeReason(error: unknown): string {
  return error instanceof GuardedFetchError ? error.message : 'the email could not be sent';
}

export function createNotifier(options: NotifierOptions): Notifier {
  const { db, mailer, kv, log } = options;
  const delays = options.retryDelaysMs ?? [1_000, 5_000, 25_000];
  const limit = options.limitPerHour ?? 2;
  const running = new Set<Promise<void>>();
  const fetchWebhook = createGuardedFetch({
    subject: 'the webhook',
    policy: () => outboundPolicyOf(options.options),
    resolve: options.resolveHost,
  });

  const track = (job: () => Promise<void>) => {
    const promise = job().catch((err: unknown) => log.warn({ err }, 'a notice could not be sent'));
    running.add(promise);
    void promise.finally(() => running.delete(promise));
  };

  /** Tries `send` until it succeeds or the retries run out; the last error is thrown. A refusal is final. */
  async function withRetries(send: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await send();
        return;
      } catch (error) {
        const isRefused = error instanceof GuardedFetchError && error.failure === 'not_allowed';
        if (attempt >= delays.length || isRefused) throw error;
        await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
      }
    }
  }

  async function recordFailure(userId: number, username: string, notice: Notice, error: unknown) {
    log.warn({ err: error, userId, type: notice.type }, 'a notice could not be delivered');
    await db.insert(logs).values({
      userId,
      username,
      createdAt: Math.floor(Date.now() / 1000),
      type: LogType.System,
      content: `could not deliver the "${notice.title}" notice: ${safeReason(error)}`,
    });
  }

  async function postWebhook(url: string, secret: string, notice: Notice) {
    const { body, signature } = signedWebhook(notice, secret, Date.now());
    const answer = await fetchWebhook({
      url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'x-webhook-signature': signature } : {}),
      },
      body,
    });
    // A redirect is not followed: its target would escape the address check.
    if (answer.status < 200 || answer.status > 299)
      throw new GuardedFetchError('answered', `the webhook answered ${answer.status}`, undefined);
  }

  const mail = (to: string, notice: Notice) =>
    mailer.send({
      to,
      subject: notice.title,
      html: `<p>${escapeHtml(notice.content).replace(/\n/g, '<br>')}</p>`,
      text: notice.content,
    });

  async function deliverToUser(userId: number, notice: Notice): Promise<void> {
    const hour = new Date().toISOString().slice(0, 13);
    if ((await kv.incr(`notify_limit:${userId}:${notice.type}:${hour}`, 3600)) > limit) return;
    const [user] = await db
      .select({ username: users.username, email: users.email, setting: users.setting })
      .from(users)
      .where(and(eq(users.id, userId), isNull(users.deletedAt)));
    if (!user) return;
    const setting = parseUserSetting(user.setting);
    try {
      if (setting.notify_type === 'webhook' && setting.webhook_url) {
        const { webhook_url: url } = setting;
        await withRetries(() => postWebhook(url, setting.webhook_secret ?? '', notice));
      } else {
        const to = setting.notification_email || user.email;
        if (!to) return;
        await withRetries(() => mail(to, notice));
      }
    } catch (error) {
      await recordFailure(userId, user.username, notice, error);
    }
  }

  function lowBalanceNotice(change: BalanceChange): Notice {
    const perUnit = options.options('QuotaPerUnit');
    const address = options.options('ServerAddress');
    const left = (change.after / perUnit).toFixed(2);
    return {
      type: 'quota_exceed',
      title: 'Your balance is running low',
      content: `Your balance is now $${left} (${change.after} quota), below your warning threshold. Top up at ${address}/topup to keep your API keys working.`,
    };
  }

  return {
    balancesLowered(changes) {
      const fallback = options.options('QuotaRemindThreshold');
      for (const change of changes) {
        if (!crossedThreshold(change, warningThreshold(change.setting, fallback))) continue;
        const notice = lowBalanceNotice(change);
        track(() => deliverToUser(change.userId, notice));
      }
    },
    notifyRoot(notice) {
      track(async () => {
        const [root] = await db
          .select({ id: users.id, username: users.username, email: users.email })
          .from(users)
          .where(and(eq(users.role, Role.Root), isNull(users.deletedAt)))
          .limit(1);
        if (!root?.email) return;
        try {
          await withRetries(() => mail(root.email, notice));
        } catch (error) {
          await recordFailure(root.id, root.username, notice, error);
        }
      });
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

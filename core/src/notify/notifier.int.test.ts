import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Database } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { logs } from '../db/schema/logs.ts';
import { LogType } from '../domain/logs.ts';
import { Role } from '../domain/users.ts';
import { createMemoryKv } from '../kv/kv.ts';
import { createSmtpMailer } from '../mail/mailer.ts';
import { defaultOptionValue, type OptionKey, type OptionReader } from '../options/registry.ts';
import { createUserRepo } from '../repos/user.repo.ts';
import { freePort } from '../testing/free-port.ts';
import { type SmtpTestServer, startSmtpTestServer } from '../testing/smtp-test-server.ts';
import { createTestDatabaseUrl } from '../testing/test-runtime.ts';
import { createNotifier, type Notifier } from './notifier.ts';

/** A webhook receiver that checks each body's signature with the secret, and can be told to fail. */
async function startWebhookReceiver(secret: string) {
  const received: { body: Record<string, unknown>; signed: boolean }[] = [];
  let failing = false;
  let connections = 0;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on('end', () => {
      if (failing) {
        res.writeHead(500).end();
        return;
      }
      const expected = createHmac('sha256', secret).update(text).digest('hex');
      received.push({ body: JSON.parse(text), signed: req.headers['x-webhook-signature'] === expected });
      res.writeHead(204).end();
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    /** TCP connections accepted: what a service on the gateway's network would see. */
    connections: () => connections,
    fail(on: boolean) {
      failing = on;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('notices', () => {
  let database: Database;
  let dropDatabase: () => Promise<void>;
  let smtp: SmtpTestServer;
  let webhook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let notifier: Notifier;
  const values: Partial<Record<OptionKey, unknown>> = {};
  const read = ((key: OptionKey) => (key in values ? values[key] : defaultOptionValue(key))) as OptionReader;

  beforeAll(async () => {
    const url = await createTestDatabaseUrl();
    dropDatabase = url.drop;
    database = await createDb({ url: url.url });
    await migrate(database);
    smtp = await startSmtpTestServer();
    webhook = await startWebhookReceiver('hook-secret');
    Object.assign(values, {
      SMTPServer: '127.0.0.1',
      SMTPPort: smtp.port,
      SMTPFrom: 'noreply@example.com',
      QuotaRemindThreshold: 1000,
      ServerAddress: 'https://gw.example.com',
      // The receivers listen on loopback, which only root's allowance lets a webhook reach.
      'fetch_setting.allowed_ranges': ['127.0.0.0/8'],
    });
    notifier = createNotifier({
      db: database.db,
      options: read,
      mailer: createSmtpMailer(read),
      kv: createMemoryKv(),
      log: { warn: () => {} },
      retryDelaysMs: [10, 10],
      // No name resolves: a test sends nothing past this machine.
      resolveHost: async (name) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      },
    });
  });
  afterAll(async () => {
    await webhook?.close();
    await smtp?.close();
    await database?.close();
    await dropDatabase?.();
  });

  const user = (fields: { setting?: object; email?: string; role?: number }) =>
    createUserRepo(database.db).insert({
      username: `n-${Math.random().toString(36).slice(2, 9)}`,
      password: 'x',
      email: fields.email ?? '',
      role: fields.role ?? Role.User,
      setting: fields.setting ? JSON.stringify(fields.setting) : '',
    });

  it('sends one signed webhook when a balance crosses the user threshold, not for debits on either side', async () => {
    const setting = {
      notify_type: 'webhook',
      quota_warning_threshold: 500,
      webhook_url: webhook.url,
      webhook_secret: 'hook-secret',
    };
    const u = await user({ setting });
    const text = JSON.stringify(setting);
    notifier.balancesLowered([
      { userId: u.id, before: 900, after: 600, setting: text }, // above
      { userId: u.id, before: 600, after: 450, setting: text }, // crosses
      { userId: u.id, before: 450, after: 100, setting: text }, // already below
    ]);
    await notifier.idle();
    expect(webhook.received).toHaveLength(1);
    expect(webhook.received[0]).toMatchObject({ signed: true, body: { type: 'quota_exceed' } });
    expect(String(webhook.received[0]?.body.content)).toContain('https://gw.example.com/topup');
  });

  it('emails the notification address, with QuotaRemindThreshold when the user set none', async () => {
    const u = await user({
      email: 'account@example.com',
      setting: { notification_email: 'alerts@example.com' },
    });
    const before = smtp.received.length;
    notifier.balancesLowered([
      { userId: u.id, before: 1000, after: 999, setting: '{"notification_email":"alerts@example.com"}' },
    ]);
    await notifier.idle();
    const mail = await smtp.next(before);
    expect(mail.to).toEqual(['alerts@example.com']);
    expect(mail.subject).toBe('Your balance is running low');
  });

  it('sends at most two notices of one kind an hour to one user', async () => {
    const u = await user({ email: 'often@example.com' });
    const before = smtp.received.length;
    for (let i = 0; i < 4; i += 1)
      notifier.balancesLowered([{ userId: u.id, before: 1000, after: 10, setting: '' }]);
    await notifier.idle();
    expect(smtp.received.slice(before).filter((m) => m.to.includes('often@example.com'))).toHaveLength(2);
  });

  it('retries a failing webhook, then writes a system log root can see', async () => {
    webhook.fail(true);
    try {
      const setting = { notify_type: 'webhook', webhook_url: webhook.url, quota_warning_threshold: 10 };
      const u = await user({ setting });
      notifier.balancesLowered([{ userId: u.id, before: 10, after: 0, setting: JSON.stringify(setting) }]);
      await notifier.idle();
      const rows = await database.db.select().from(logs).where(eq(logs.userId, u.id));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ type: LogType.System });
      expect(rows[0]?.content).toContain('the webhook answered 500');
    } finally {
      webhook.fail(false);
    }
  });

  /** Runs `body` with root's allowance of loopback replaced (by none: a gateway left at its defaults). */
  async function withAllowance(ranges: string[], body: () => Promise<void>) {
    const allowed = values['fetch_setting.allowed_ranges'];
    values['fetch_setting.allowed_ranges'] = ranges;
    try {
      await body();
    } finally {
      values['fetch_setting.allowed_ranges'] = allowed;
    }
  }

  /**
   * A user whose webhook is `url` crosses their threshold; answers, once the notice is settled, what the user's
   * log says and whether the receiver saw anything (a kept-alive connection from an earlier test would carry a
   * request without a new connection, so both are counted).
   */
  async function crossWithWebhook(url: string) {
    const before = { connections: webhook.connections(), requests: webhook.received.length };
    const setting = { notify_type: 'webhook', quota_warning_threshold: 10, webhook_url: url };
    const u = await user({ setting });
    notifier.balancesLowered([{ userId: u.id, before: 10, after: 0, setting: JSON.stringify(setting) }]);
    await notifier.idle();
    const rows = await database.db.select().from(logs).where(eq(logs.userId, u.id));
    return {
      logs: rows.map((row) => row.content),
      reached: webhook.connections() > before.connections || webhook.received.length > before.requests,
    };
  }

  const failed = (reason: string) => `could not deliver the "Your balance is running low" notice: ${reason}`;

  it('never reaches a webhook on the loopback address and tells the user only that it is not allowed', async () => {
    const { port } = new URL(webhook.url);
    await withAllowance([], async () => {
      expect(await crossWithWebhook(`http://127.0.0.1:${port}/internal-admin/delete-everything`)).toEqual({
        logs: [failed('the webhook address is not allowed')],
        reached: false,
      });
    });
  });

  it('says the same of a closed internal port as of a name that does not resolve', async () => {
    const closed = await freePort();
    const unreachable = { logs: [failed('the webhook could not be reached')], reached: false };
    expect(await crossWithWebhook(`http://127.0.0.1:${closed}/`)).toEqual(unreachable);
    expect(await crossWithWebhook('http://hooks.example.test/hook')).toEqual(unreachable);
  });

  it('does not follow a redirect to the loopback address: the user reads the status it answered', async () => {
    const redirector = http.createServer((_req, res) =>
      res.writeHead(302, { location: `${webhook.url}?via=redirect` }).end(),
    );
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
    try {
      const { port } = redirector.address() as AddressInfo;
      await withAllowance(['127.0.0.2/32'], async () => {
        expect(await crossWithWebhook(`http://127.0.0.2:${port}/hook`)).toEqual({
          logs: [failed('the webhook answered 302')],
          reached: false,
        });
      });
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  it('emails root about channels', async () => {
    await user({ role: Role.Root, email: 'root@example.com' });
    const before = smtp.received.length;
    notifier.notifyRoot({
      type: 'channel_update',
      title: 'Channel "a" (#1) was disabled',
      content: 'quota exhausted',
    });
    await notifier.idle();
    const mail = await smtp.next(before);
    expect(mail.to).toEqual(['root@example.com']);
    expect(mail.body).toContain('quota exhausted');
  });
});

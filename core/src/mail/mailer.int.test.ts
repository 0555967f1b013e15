import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../errors.ts';
import { defaultOptionValue, type OptionKey, type OptionReader } from '../options/registry.ts';
import { type SmtpTestServer, startSmtpTestServer } from '../testing/smtp-test-server.ts';
import { createSmtpMailer, smtpTransportOptions } from './mailer.ts';

/** An option reader over defaults plus the given values, like the store after an admin saved them. */
function optionsWith(values: Partial<Record<OptionKey, unknown>>): OptionReader {
  return ((key: OptionKey) => (key in values ? values[key] : defaultOptionValue(key))) as OptionReader;
}

describe('SMTP mailer', () => {
  let server: SmtpTestServer;
  let openServer: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtpTestServer({ user: 'mailer@example.com', password: 'smtp-secret-1' });
    openServer = await startSmtpTestServer();
  });
  afterAll(async () => {
    await server.close();
    await openServer.close();
  });

  it('signs in with the account and delivers the message with the configured sender', async () => {
    const mailer = createSmtpMailer(
      optionsWith({
        SMTPServer: '127.0.0.1',
        SMTPPort: server.port,
        SMTPAccount: 'mailer@example.com',
        SMTPToken: 'smtp-secret-1',
        SMTPFrom: 'noreply@example.com',
      }),
    );
    expect(mailer.isConfigured()).toBe(true);
    await mailer.send({ to: 'ann@example.com', subject: 'Hello Ann', html: '<p>code <b>AB12CD</b></p>' });
    const mail = await server.next(0);
    expect(mail.user).toBe('mailer@example.com');
    expect(mail.from).toBe('noreply@example.com');
    expect(mail.to).toEqual(['ann@example.com']);
    expect(mail.subject).toBe('Hello Ann');
    expect(mail.body).toContain('<b>AB12CD</b>');
  });

  it('uses the account as sender when SMTPFrom is empty', async () => {
    const mailer = createSmtpMailer(
      optionsWith({
        SMTPServer: '127.0.0.1',
        SMTPPort: server.port,
        SMTPAccount: 'mailer@example.com',
        SMTPToken: 'smtp-secret-1',
      }),
    );
    const before = server.received.length;
    await mailer.send({ to: 'bob@example.com', subject: 'Hi', html: '<p>hi</p>' });
    expect((await server.next(before)).from).toBe('mailer@example.com');
  });

  it('sends without signing in when no account is set', async () => {
    const mailer = createSmtpMailer(
      optionsWith({ SMTPServer: '127.0.0.1', SMTPPort: openServer.port, SMTPFrom: 'noreply@example.com' }),
    );
    await mailer.send({
      to: 'cat@example.com',
      subject: 'Anonymous',
      html: 'plain body',
      text: 'plain body',
    });
    const mail = await openServer.next(0);
    expect(mail.user).toBeUndefined();
    expect(mail.body).toContain('plain body');
  });

  it('reports a refused login as a plain failure without the password', async () => {
    const errors: unknown[] = [];
    const mailer = createSmtpMailer(
      optionsWith({
        SMTPServer: '127.0.0.1',
        SMTPPort: server.port,
        SMTPAccount: 'mailer@example.com',
        SMTPToken: 'wrong-secret-9',
      }),
      { onError: (error) => errors.push(error) },
    );
    const before = server.received.length;
    const failure = await mailer.send({ to: 'dan@example.com', subject: 'x', html: 'x' }).catch((e) => e);
    expect(isAppError(failure)).toBe(true);
    expect(failure).toMatchObject({ status: 502, message: 'the email could not be sent; try again later' });
    expect(String(failure.message)).not.toContain('wrong-secret-9');
    expect(errors).toHaveLength(1);
    expect(server.received.length).toBe(before);
  });

  it('refuses to send when no SMTP server is configured', async () => {
    const mailer = createSmtpMailer(optionsWith({}));
    expect(mailer.isConfigured()).toBe(false);
    await expect(mailer.send({ to: 'eve@example.com', subject: 'x', html: 'x' })).rejects.toMatchObject({
      code: 'FEATURE_DISABLED',
      message: expect.stringMatching(/SMTP/),
    });
  });

  it('uses implicit TLS on port 465 or with the SSL switch, and LOGIN auth for Outlook', () => {
    const base = {
      server: 'smtp.example.com',
      account: 'a@example.com',
      from: '',
      password: 'p',
      ssl: false,
    };
    expect(smtpTransportOptions({ ...base, port: 465 }).secure).toBe(true);
    expect(smtpTransportOptions({ ...base, port: 587 }).secure).toBe(false);
    expect(smtpTransportOptions({ ...base, port: 587, ssl: true }).secure).toBe(true);
    expect(smtpTransportOptions({ ...base, port: 587, server: 'smtp.office365.com' })).toMatchObject({
      authMethod: 'LOGIN',
    });
    expect(smtpTransportOptions({ ...base, port: 587 })).not.toHaveProperty('authMethod');
  });
});

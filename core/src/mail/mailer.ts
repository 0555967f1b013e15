import type nodemailer from 'nodemailer';
import { AppError } from '../errors.ts';
import type { OptionReader } from '../options/registry.ts';

/** One message to one recipient. `html` is the body; `text` is the plain alternative. */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly html: string;
  readonly text?: string;
}

/** Sends mail. Throws AppError FEATURE_DISABLED when mail is not configured, and a 502 when sending fails. */
export interface Mailer {
  /** Whether mail can be sent at all (an SMTP server is configured). */
  isConfigured(): boolean;
  send(message: MailMessage): Promise<void>;
}

/** The SMTP settings of the options store, read at every send so a change applies at once. */
export interface SmtpSettings {
  readonly server: string;
  readonly port: number;
  readonly account: string;
  readonly from: string;
  readonly password: string;
  readonly ssl: boolean;
}

export function readSmtpSettings(read: OptionReader): SmtpSettings {
  return {
    server: read('SMTPServer').trim(),
    port: read('SMTPPort'),
    account: read('SMTPAccount').trim(),
    from: read('SMTPFrom').trim(),
    password: read('SMTPToken'),
    ssl: read('SMTPSSLEnabled'),
  };
}

/** Microsoft's servers refuse PLAIN for basic auth and want LOGIN. */
const wantsLoginAuth = (settings: SmtpSettings) =>
  /outlook|office365|azurecomm/i.test(settings.server) || /outlook|azurecomm/i.test(settings.account);

/** Nodemailer options for these settings: port 465 or the SSL switch means TLS from the first byte. */
export function smtpTransportOptions(settings: SmtpSettings) {
  return {
    host: settings.server,
    port: settings.port,
    secure: settings.port === 465 || settings.ssl,
    ...(settings.account
      ? {
          auth: { user: settings.account, pass: settings.password },
          ...(wantsLoginAuth(settings) ? { authMethod: 'LOGIN' } : {}),
        }
      : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  };
}

export interface CreateSmtpMailerOptions {
  /** Told about a failed send (the error has no password in it); the caller only sees a plain message. */
  readonly onError?: (error: unknown) => void;
  /** Extra nodemailer transport options; tests use it to accept a self-signed certificate. */
  readonly transportOverrides?: Record<string, unknown>;
}

/** A mailer over SMTP with the settings of the options store (SMTPServer, SMTPPort, SMTPAccount, ...). */
export function createSmtpMailer(read: OptionReader, options: CreateSmtpMailerOptions = {}): Mailer {
  return {
    isConfigured: () => readSmtpSettings(read).server !== '',

    async send(message) {
      const settings = readSmtpSettings(read);
      if (!settings.server) {
        throw new AppError(
          'FEATURE_DISABLED',
          'outgoing mail is not configured; ask the administrator to set up SMTP',
        );
      }
      const from = settings.from || settings.account;
      if (!from) {
        throw new AppError(
          'FEATURE_DISABLED',
          'outgoing mail has no sender address; ask the administrator to set SMTPFrom',
        );
      }
      // Loaded on the first mail: most processes never send one, and nodemailer is ~20 MiB of resident memory.
      const { createTransport } = (await import('nodemailer')).default;
      const transport = createTransport({
        ...smtpTransportOptions(settings),
        ...options.transportOverrides,
      } as Parameters<typeof nodemailer.createTransport>[0]);
      try {
        await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          html: message.html,
          ...(message.text === undefined ? {} : { text: message.text }),
        });
      } catch (error) {
        options.onError?.(error);
        throw new AppError('INTERNAL', 'the email could not be sent; try again later', {
          status: 502,
          cause: error,
        });
      } finally {
        transport.close();
      }
    },
  };
}

/** Escapes text for an HTML mail body. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

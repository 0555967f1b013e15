import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message the test server accepted, as it came over the wire. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  /** Raw RFC 5322 text: headers and body. */
  readonly raw: string;
  readonly subject: string;
  /** The body with quoted-printable soft breaks and escapes undone, good for `toContain`. */
  readonly body: string;
  readonly user: string | undefined;
}

export interface SmtpTestServer {
  readonly port: number;
  readonly received: ReceivedMail[];
  /** Resolves with the next message (or one already received after `afterCount`). */
  next(afterCount?: number, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(text: string): string {
  const bytes = Buffer.from(
    text
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
  return bytes.toString('utf8');
}

function headerOf(raw: string, name: string): string {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const line = unfolded.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : '';
}

/**
 * A real SMTP server on 127.0.0.1 for tests (plain, no TLS). With `credentials` it demands AUTH and refuses
 * anything else; without, it accepts anonymous mail.
 */
export async function startSmtpTestServer(credentials?: {
  user: string;
  password: string;
}): Promise<SmtpTestServer> {
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !credentials,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const [, ...bodyParts] = raw.split(/\r?\n\r?\n/);
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: headerOf(raw, 'Subject'),
          body: decodeQuotedPrintable(bodyParts.join('\n\n')),
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        for (const wake of waiters.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    async next(afterCount = received.length, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length <= afterCount) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no mail arrived at the test SMTP server');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received[afterCount]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

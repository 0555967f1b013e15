import { hashPassword } from '@turnpike/core/crypto/password';
import { randomString } from '@turnpike/core/crypto/random';
import { users } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { AppError } from '@turnpike/core/errors';
import { escapeHtml, type Mailer } from '@turnpike/core/mail/mailer';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { and, isNull, ne, sql } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import {
  createVerificationCodes,
  RESEND_WAIT_SECONDS,
  VERIFICATION_TTL_SECONDS,
} from './verification-codes.ts';

/** Length of the password a reset hands out (as the reference). */
export const RESET_PASSWORD_LENGTH = 12;

/** The answer to a reset request, the same whether or not an account uses the address. */
export const RESET_SENT_MESSAGE =
  'if an account uses this email address, a password reset link has been sent to it';

const TTL_MINUTES = VERIFICATION_TTL_SECONDS / 60;

export interface VerificationServiceOptions {
  /** Told when a reset mail could not be sent (it is sent after the answer, so nobody else hears of it). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** Email verification codes, password reset by email, and email binding. */
export function createVerificationService(
  deps: AppDeps,
  mailer: Mailer,
  options: VerificationServiceOptions = {},
) {
  const repo = createUserRepo(deps.db);
  const codes = createVerificationCodes(deps.kv);
  const o = deps.options;

  /** The live account using this address, compared without case (addresses were stored as typed). */
  async function findByEmail(email: string, exceptId?: number): Promise<User | undefined> {
    const [row] = await deps.db
      .select()
      .from(users)
      .where(
        and(
          sql`lower(${users.email}) = ${email.toLowerCase()}`,
          isNull(users.deletedAt),
          exceptId === undefined ? undefined : ne(users.id, exceptId),
        ),
      )
      .limit(1);
    return row;
  }

  /** The whitelist and alias rules of the email-restriction options. */
  function assertEmailAllowed(email: string): void {
    const at = email.lastIndexOf('@');
    const local = email.slice(0, at);
    const domain = email.slice(at + 1).toLowerCase();
    if (o.get('EmailDomainRestrictionEnabled') && !o.get('EmailDomainWhitelist').includes(domain)) {
      throw new AppError(
        'VALIDATION_FAILED',
        `email addresses at ${domain} are not accepted; the administrator allows only: ${o.get('EmailDomainWhitelist').join(', ')}`,
      );
    }
    if (o.get('EmailAliasRestrictionEnabled') && /[+.]/.test(local)) {
      throw new AppError(
        'VALIDATION_FAILED',
        'email aliases are not accepted: the part before @ must not contain "+" or "."',
      );
    }
  }

  function assertMailReady(): void {
    if (!mailer.isConfigured()) {
      throw new AppError(
        'FEATURE_DISABLED',
        'outgoing mail is not configured; ask the administrator to set up SMTP',
      );
    }
  }

  async function claimSlot(purpose: 'email' | 'reset', email: string): Promise<void> {
    if (!(await codes.claimSendSlot(purpose, email))) {
      throw new AppError(
        'RATE_LIMITED',
        `a mail was just sent to this address; wait ${RESEND_WAIT_SECONDS} seconds before asking again`,
      );
    }
  }

  return {
    /** Mails a 6-character code for registration or binding to an address that is allowed and not in use. */
    async sendVerificationCode(email: string): Promise<void> {
      assertEmailAllowed(email);
      if (await findByEmail(email)) {
        throw new AppError('CONFLICT', 'this email address is already in use');
      }
      assertMailReady();
      await claimSlot('email', email);
      const code = await codes.issue('email', email);
      const systemName = o.get('SystemName');
      try {
        await mailer.send({
          to: email,
          subject: `${systemName} email verification`,
          text: `Your verification code is ${code}. It is valid for ${TTL_MINUTES} minutes. If you did not ask for it, ignore this mail.`,
          html:
            `<p>Hello,</p><p>you are verifying your email address for ${escapeHtml(systemName)}.</p>` +
            `<p>Your verification code is: <strong>${code}</strong></p>` +
            `<p>It is valid for ${TTL_MINUTES} minutes. If you did not ask for it, ignore this mail.</p>`,
        });
      } catch (error) {
        await codes.releaseSendSlot('email', email);
        throw error;
      }
    },

    /**
     * Mails a reset link to the account using this address. An unknown address gets the same answer and takes
     * the same path up to the send, which happens after the answer, so neither the message nor the timing
     * tells whether an account exists.
     */
    async sendResetLink(email: string): Promise<void> {
      assertMailReady();
      const serverAddress = o.get('ServerAddress');
      if (!serverAddress) {
        // Never build the link from the Host header: a forged one would send the token to someone else.
        throw new AppError(
          'FEATURE_DISABLED',
          'password reset is unavailable until the administrator sets the server address',
        );
      }
      await claimSlot('reset', email);
      const user = await findByEmail(email);
      if (!user) return;
      const token = await codes.issue('reset', email);
      const link = `${serverAddress}/user/reset?email=${encodeURIComponent(email)}&token=${token}`;
      const systemName = o.get('SystemName');
      void mailer
        .send({
          to: user.email,
          subject: `${systemName} password reset`,
          text: `Open this link to reset your password: ${link} It is valid for ${TTL_MINUTES} minutes. If you did not ask for a reset, ignore this mail.`,
          html:
            `<p>Hello,</p><p>someone asked to reset the password of your ${escapeHtml(systemName)} account.</p>` +
            `<p><a href="${escapeHtml(link)}">Reset the password</a></p>` +
            `<p>Or open this address: ${escapeHtml(link)}</p>` +
            `<p>It is valid for ${TTL_MINUTES} minutes. If you did not ask for a reset, ignore this mail.</p>`,
        })
        .catch(async (error: unknown) => {
          await codes.releaseSendSlot('reset', email).catch(() => {});
          options.onBackgroundError?.(error);
        });
    },

    /** Sets a new random password for the account of a valid reset token, once; returns the password. */
    async resetPassword(email: string, token: string): Promise<string> {
      const invalid = new AppError('VALIDATION_FAILED', 'the reset link is invalid or has expired');
      if (!(await codes.consume('reset', email, token))) throw invalid;
      const user = await findByEmail(email);
      if (!user) throw invalid;
      const password = randomString(RESET_PASSWORD_LENGTH);
      await repo.update(user.id, { password: await hashPassword(password) });
      await deps.bus.publish({ type: 'users.changed', ids: [user.id] });
      return password;
    },

    /** Binds the address to the signed-in user after checking the code mailed to it. */
    async bindEmail(user: User, email: string, code: string): Promise<void> {
      assertEmailAllowed(email);
      if (!(await codes.consume('email', email, code))) {
        throw new AppError('VALIDATION_FAILED', 'the verification code is wrong or has expired');
      }
      if (await findByEmail(email, user.id)) {
        throw new AppError('CONFLICT', 'this email address is already in use');
      }
      await repo.update(user.id, { email });
      await deps.bus.publish({ type: 'users.changed', ids: [user.id] });
    },
  };
}
export type VerificationService = ReturnType<typeof createVerificationService>;

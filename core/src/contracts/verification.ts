import { z } from 'zod';

/** Longest email address the product stores (as the reference). */
export const EMAIL_MAX = 50;

const email = z
  .string({ error: 'email is required' })
  .trim()
  .min(1, 'email is required')
  .max(EMAIL_MAX, `email must be at most ${EMAIL_MAX} characters`)
  .pipe(z.email('email is not a valid address'))
  .transform((v) => v.toLowerCase());

/** GET /api/verification and GET /api/reset_password query (`turnstile` is read by the human check). */
export const emailQuerySchema = z.object({ email });
export type EmailQuery = z.infer<typeof emailQuerySchema>;

/** GET /api/oauth/email/bind query. */
export const bindEmailSchema = z.object({
  email,
  code: z
    .string({ error: 'the verification code is required' })
    .trim()
    .min(1, 'the verification code is required'),
});
export type BindEmail = z.infer<typeof bindEmailSchema>;

/** POST /api/user/reset body; `data` of the answer is the new password. */
export const resetPasswordSchema = z.object({
  email,
  token: z.string({ error: 'the reset token is required' }).trim().min(1, 'the reset token is required'),
});
export type ResetPassword = z.infer<typeof resetPasswordSchema>;

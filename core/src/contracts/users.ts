import { z } from 'zod';
import type { User } from '../db/schema/users.ts';
import { ManageAction } from '../domain/users.ts';
import { pageQuerySchema } from './envelope.ts';
import { quotaWindowsField } from './quota-windows.ts';

export const USERNAME_MAX = 12;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
export const DISPLAY_NAME_MAX = 20;

const username = z
  .string({ error: 'username is required' })
  .trim()
  .min(1, 'username is required')
  .max(USERNAME_MAX, `username must be at most ${USERNAME_MAX} characters`);
const password = z
  .string({ error: 'password is required' })
  .min(PASSWORD_MIN, `password must be at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `password must be at most ${PASSWORD_MAX} characters`);
const displayName = z
  .string()
  .trim()
  .max(DISPLAY_NAME_MAX, `display name must be at most ${DISPLAY_NAME_MAX} characters`);

export const loginSchema = z.object({
  username: z.string({ error: 'enter username and password' }).trim().min(1, 'enter username and password'),
  password: z.string({ error: 'enter username and password' }).min(1, 'enter username and password'),
});
export type Login = z.infer<typeof loginSchema>;

export const registerSchema = z
  .object({
    username,
    password,
    password2: z.string().optional(),
    email: z.string().trim().max(50).optional().default(''),
    verification_code: z.string().trim().optional().default(''),
    aff_code: z.string().trim().max(32).optional().default(''),
  })
  .refine((v) => v.password2 === undefined || v.password2 === '' || v.password2 === v.password, {
    message: 'the two passwords differ',
    path: ['password2'],
  });
export type Register = z.infer<typeof registerSchema>;

export const setupSchema = z.object({
  username: z.string().trim().optional().default(''),
  password: z.string().optional().default(''),
  confirmPassword: z.string().optional().default(''),
  SelfUseModeEnabled: z.boolean().optional().default(false),
  DemoSiteEnabled: z.boolean().optional().default(false),
});
export type SetupInput = z.infer<typeof setupSchema>;

export const updateSelfSchema = z.object({
  username: username.optional(),
  display_name: displayName.optional(),
  password: z.union([z.literal(''), password]).optional(),
  original_password: z.string().optional(),
});
export type UpdateSelf = z.infer<typeof updateSelfSchema>;

const requiredForCreate = 'username and password must not be empty';

export const createUserSchema = z.object({
  username: z
    .string({ error: requiredForCreate })
    .trim()
    .min(1, requiredForCreate)
    .max(USERNAME_MAX, `username must be at most ${USERNAME_MAX} characters`),
  password: z
    .string({ error: requiredForCreate })
    .min(1, requiredForCreate)
    .min(PASSWORD_MIN, `password must be at least ${PASSWORD_MIN} characters`)
    .max(PASSWORD_MAX, `password must be at most ${PASSWORD_MAX} characters`),
  display_name: displayName.optional().default(''),
  role: z.number({ error: 'role must be a number' }).int('role must be an integer').optional(),
});
export type CreateUser = z.infer<typeof createUserSchema>;

export const updateUserSchema = z.object({
  id: z.number({ error: 'id is required' }).int().positive(),
  username: username.optional(),
  display_name: displayName.optional(),
  password: z.union([z.literal(''), password]).optional(),
  email: z.union([z.literal(''), z.email('email is not a valid address')]).optional(),
  group: z.string().trim().min(1).max(64).optional(),
  quota: z
    .number({ error: 'quota must be an integer' })
    .int('quota must be an integer')
    .min(0, 'quota must not be negative')
    .max(Number.MAX_SAFE_INTEGER, 'quota is too large')
    .optional(),
  /** Budgets that reset (docs/adr/0043), beside the group's; an edit without it keeps the user's windows. */
  quota_windows: quotaWindowsField.optional(),
});
export type UpdateUser = z.infer<typeof updateUserSchema>;

export const manageUserSchema = z.object({
  id: z.number({ error: 'id is required' }).int().positive(),
  action: z.enum(ManageAction, { error: `action must be one of ${ManageAction.join(', ')}` }),
});
export type ManageUser = z.infer<typeof manageUserSchema>;

/** `GET /api/user/search`: keyword and group, with the usual `p` / `page_size`. */
export const userSearchQuerySchema = pageQuerySchema.extend({
  keyword: z.string().trim().max(100, 'keyword must be at most 100 characters').optional().default(''),
  group: z.string().trim().max(64, 'group must be at most 64 characters').optional().default(''),
});
export type UserSearchQuery = z.infer<typeof userSearchQuerySchema>;

/** What `POST /api/user/manage` answers: the row's new role and status. */
export interface ManageUserResult {
  role: number;
  status: number;
}

export const affTransferSchema = z.object({
  quota: z.number({ error: 'quota must be a number' }).int('quota must be an integer'),
});

export const NotifyType = ['email', 'webhook'] as const;

export const userSettingSchema = z
  .object({
    notify_type: z.enum(NotifyType, { error: 'notify_type must be email or webhook' }),
    quota_warning_threshold: z
      .number({ error: 'quota_warning_threshold must be a number' })
      .positive('quota_warning_threshold must be greater than 0'),
    webhook_url: z.string().trim().optional().default(''),
    webhook_secret: z.string().optional().default(''),
    notification_email: z
      .union([z.literal(''), z.email('notification email is not a valid address')])
      .optional()
      .default(''),
    accept_unset_model_ratio_model: z.boolean().optional().default(false),
  })
  .superRefine((v, ctx) => {
    if (v.notify_type !== 'webhook') return;
    if (!v.webhook_url) {
      ctx.addIssue({
        code: 'custom',
        path: ['webhook_url'],
        message: 'webhook_url is required for webhook notifications',
      });
      return;
    }
    if (!URL.canParse(v.webhook_url) || !/^https?:$/.test(new URL(v.webhook_url).protocol)) {
      ctx.addIssue({
        code: 'custom',
        path: ['webhook_url'],
        message: 'webhook_url must be an http(s) address',
      });
    }
  });
export type UserSetting = z.infer<typeof userSettingSchema>;

/** What the settings JSON may hold when read back; the webhook secret is never sent out. */
export interface StoredUserSetting extends Partial<UserSetting> {}

export function parseUserSetting(text: string): StoredUserSetting {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as StoredUserSetting) : {};
  } catch {
    return {};
  }
}

/** The user as the console sees it: snake_case fields of the reference; never the password or webhook secret. */
export function toUserView(user: User, options: { includeAccessToken?: boolean } = {}) {
  const { webhook_secret: _secret, ...setting } = parseUserSetting(user.setting);
  return {
    id: user.id,
    username: user.username,
    display_name: user.displayName,
    role: user.role,
    status: user.status,
    email: user.email,
    github_id: user.githubId,
    oidc_id: user.oidcId,
    wechat_id: user.wechatId,
    telegram_id: user.telegramId,
    linux_do_id: user.linuxDoId,
    ...(options.includeAccessToken ? { access_token: user.accessToken ?? '' } : {}),
    quota: user.quota,
    used_quota: user.usedQuota,
    request_count: user.requestCount,
    group: user.group,
    quota_windows: user.quotaWindows,
    aff_code: user.affCode ?? '',
    aff_count: user.affCount,
    aff_quota: user.affQuota,
    aff_history_quota: user.affHistoryQuota,
    inviter_id: user.inviterId,
    created_time: user.createdTime,
    DeletedAt: user.deletedAt ? user.deletedAt.toISOString() : null,
    setting: JSON.stringify({ ...setting, has_webhook_secret: Boolean(_secret) }),
  };
}
export type UserView = ReturnType<typeof toUserView>;

/** The short form login answers with and the console keeps in local storage. */
export const toSessionUser = (user: User) => ({
  id: user.id,
  username: user.username,
  display_name: user.displayName,
  role: user.role,
  status: user.status,
  group: user.group,
});

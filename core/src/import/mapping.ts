/**
 * How each row of a new-api or one-api table becomes a Turnpike row: pure functions, one per table, with the
 * source columns each reads and the ones it knowingly leaves behind (and why), so the report can say both.
 */
import type {
  NewCheckin,
  NewLog,
  NewMidjourney,
  NewQuotaData,
  NewRedemption,
  NewSubscriptionPlan,
  NewTask,
  NewToken,
  NewTopUp,
  NewUser,
  NewUserSubscription,
} from '../db/schema/index.ts';
import {
  PLAN_DURATION_UNITS,
  PLAN_RESET_PERIODS,
  type PlanDurationUnit,
  type PlanResetPeriod,
} from '../domain/closed-sets.ts';
import type { SourceRow } from './source.ts';
import { toBool, toInt, toJson, toNullableText, toNumber, toText, toTime } from './values.ts';

export type Mapped<T> = { row: T } | { skip: string };

export interface TableMapping<T> {
  /** Source columns this mapping reads (those the source lacks take Turnpike's defaults). */
  readonly reads: readonly string[];
  /** Source columns with no place in Turnpike, and why. */
  readonly drops: Readonly<Record<string, string>>;
  map(row: SourceRow): Mapped<T>;
}

const NO_COLUMN = 'Turnpike has no such field';

/** At most `max` characters: Turnpike's varchar sizes are the reference's or larger, but forks differ. */
const fit = (value: string, max: number) => (value.length > max ? value.slice(0, max) : value);

export const userMapping: TableMapping<NewUser> = {
  reads: [
    'id',
    'username',
    'password',
    'display_name',
    'role',
    'status',
    'email',
    'github_id',
    'oidc_id',
    'wechat_id',
    'telegram_id',
    'linux_do_id',
    'access_token',
    'quota',
    'used_quota',
    'request_count',
    'group',
    'aff_code',
    'aff_count',
    'aff_quota',
    'aff_history',
    'inviter_id',
    'setting',
    'created_time',
    // new-api 1.0: registration time in `created_at`
    'created_at',
    'deleted_at',
  ],
  drops: {
    last_login_at: NO_COLUMN,
    auth_version: `${NO_COLUMN} (sessions end by Turnpike's own session generation)`,
    invite_rebate_eligible: `${NO_COLUMN} (top-up rebates are not offered)`,
    discord_id: `${NO_COLUMN} (Discord sign-in is not offered)`,
    lark_id: `${NO_COLUMN} (Lark sign-in is not offered)`,
    remark: NO_COLUMN,
    stripe_customer: `${NO_COLUMN} (Stripe Checkout is opened per order with the user's email; no customer is kept)`,
  },
  map(r) {
    const username = toText(r.username).trim();
    if (!username) return { skip: 'no username' };
    if (username.length > 64) return { skip: 'username longer than 64 characters' };
    return {
      row: {
        id: toInt(r.id),
        username,
        // bcrypt hashes are kept as they are: core/src/crypto/password.ts verifies them.
        password: toText(r.password),
        displayName: fit(toText(r.display_name), 64),
        role: toInt(r.role, 1),
        status: toInt(r.status, 1),
        email: fit(toText(r.email), 255),
        githubId: fit(toText(r.github_id), 255),
        oidcId: fit(toText(r.oidc_id), 255),
        wechatId: fit(toText(r.wechat_id), 255),
        telegramId: fit(toText(r.telegram_id), 255),
        linuxDoId: fit(toText(r.linux_do_id), 255),
        accessToken: toNullableText(toText(r.access_token).trim()),
        quota: toInt(r.quota),
        usedQuota: toInt(r.used_quota),
        requestCount: toInt(r.request_count),
        group: fit(toText(r.group) || 'default', 64),
        affCode: toNullableText(toText(r.aff_code).trim()),
        affCount: toInt(r.aff_count),
        affQuota: toInt(r.aff_quota),
        affHistoryQuota: toInt(r.aff_history),
        inviterId: toInt(r.inviter_id),
        setting: toText(r.setting),
        createdTime: toInt(r.created_time ?? r.created_at),
        deletedAt: toTime(r.deleted_at),
      },
    };
  },
};

/** 48 characters [0-9A-Za-z] without `sk-`, as both the reference and Turnpike store and look keys up. */
export function tokenKeyOf(value: unknown): string | undefined {
  let key = toText(value).trim();
  if (key.startsWith('sk-')) key = key.slice(3);
  return /^[0-9a-zA-Z]{1,48}$/.test(key) ? key : undefined;
}

export const tokenMapping: TableMapping<NewToken> = {
  reads: [
    'id',
    'user_id',
    'key',
    'status',
    'name',
    'created_time',
    'accessed_time',
    'expired_time',
    'remain_quota',
    'unlimited_quota',
    'model_limits_enabled',
    'model_limits',
    'allow_ips',
    'used_quota',
    'group',
    'deleted_at',
    // one-api 0.6: `models` (comma list, empty = all) and `subnet` (comma list of CIDRs)
    'models',
    'subnet',
  ],
  drops: {
    billing_type: `${NO_COLUMN} (a plan's allowance always pays before the wallet, for every token)`,
    cross_group_retry: NO_COLUMN,
    remark: NO_COLUMN,
  },
  map(r) {
    const key = tokenKeyOf(r.key);
    if (!key) return { skip: 'key is not 1-48 letters and digits (after sk-)' };
    const oneApiModels = toText(r.models).trim();
    const hasLimits = r.model_limits_enabled !== undefined;
    const subnet = toText(r.subnet)
      .split(/[,\s]+/)
      .filter(Boolean)
      .join('\n');
    return {
      row: {
        id: toInt(r.id),
        userId: toInt(r.user_id),
        key,
        status: toInt(r.status, 1),
        name: fit(toText(r.name), 64),
        createdTime: toInt(r.created_time),
        accessedTime: toInt(r.accessed_time),
        expiredTime: toInt(r.expired_time, -1),
        remainQuota: toInt(r.remain_quota),
        unlimitedQuota: toBool(r.unlimited_quota),
        modelLimitsEnabled: hasLimits ? toBool(r.model_limits_enabled) : oneApiModels !== '',
        modelLimits: hasLimits ? toText(r.model_limits) : oneApiModels,
        allowIps: r.allow_ips !== undefined ? toText(r.allow_ips) : subnet,
        usedQuota: toInt(r.used_quota),
        group: fit(toText(r.group), 64),
        deletedAt: toTime(r.deleted_at),
      },
    };
  },
};

export const redemptionMapping: TableMapping<NewRedemption> = {
  reads: [
    'id',
    'user_id',
    'key',
    'status',
    'name',
    'quota',
    'created_time',
    'redeemed_time',
    'used_user_id',
    'deleted_at',
  ],
  drops: { expired_time: `${NO_COLUMN} (codes do not expire in Turnpike)` },
  map(r) {
    const key = toText(r.key).trim();
    if (!key || key.length > 32) return { skip: 'code is empty or longer than 32 characters' };
    return {
      row: {
        id: toInt(r.id),
        userId: toInt(r.user_id),
        key,
        status: toInt(r.status, 1),
        name: fit(toText(r.name), 255),
        quota: toInt(r.quota, 100),
        createdTime: toInt(r.created_time),
        redeemedTime: toInt(r.redeemed_time),
        usedUserId: toInt(r.used_user_id),
        deletedAt: toTime(r.deleted_at),
      },
    };
  },
};

export const topUpMapping: TableMapping<NewTopUp> = {
  reads: [
    'id',
    'user_id',
    'amount',
    'money',
    'trade_no',
    'payment_method',
    'create_time',
    'complete_time',
    'status',
  ],
  drops: {},
  map(r) {
    const id = toInt(r.id);
    return {
      row: {
        id,
        userId: toInt(r.user_id),
        amount: toInt(r.amount),
        money: toNumber(r.money),
        // trade_no is unique in Turnpike; the reference allowed it blank.
        tradeNo: fit(toText(r.trade_no).trim() || `imported-${id}`, 255),
        paymentMethod: fit(toText(r.payment_method), 50),
        createTime: toInt(r.create_time),
        completeTime: toInt(r.complete_time),
        status: fit(toText(r.status) || 'pending', 20),
      },
    };
  },
};

export const midjourneyMapping: TableMapping<NewMidjourney> = {
  reads: [
    'id',
    'code',
    'user_id',
    'action',
    'mj_id',
    'prompt',
    'prompt_en',
    'description',
    'state',
    'submit_time',
    'start_time',
    'finish_time',
    'image_url',
    'status',
    'progress',
    'fail_reason',
    'channel_id',
    'quota',
    'buttons',
    'properties',
  ],
  drops: { video_url: NO_COLUMN, video_urls: NO_COLUMN },
  map(r) {
    return {
      row: {
        id: toInt(r.id),
        code: toInt(r.code),
        userId: toInt(r.user_id),
        action: fit(toText(r.action), 40),
        mjId: fit(toText(r.mj_id), 191),
        prompt: toText(r.prompt),
        promptEn: toText(r.prompt_en),
        description: toText(r.description),
        state: toText(r.state),
        submitTime: toInt(r.submit_time),
        startTime: toInt(r.start_time),
        finishTime: toInt(r.finish_time),
        imageUrl: toText(r.image_url),
        status: fit(toText(r.status), 20),
        progress: fit(toText(r.progress), 30),
        failReason: toText(r.fail_reason),
        channelId: toInt(r.channel_id),
        quota: toInt(r.quota),
        buttons: toText(r.buttons),
        properties: toText(r.properties),
      },
    };
  },
};

export const taskMapping: TableMapping<NewTask> = {
  reads: [
    'id',
    'created_at',
    'updated_at',
    'task_id',
    'platform',
    'user_id',
    'channel_id',
    'quota',
    'action',
    'status',
    'fail_reason',
    'submit_time',
    'start_time',
    'finish_time',
    'progress',
    'properties',
    'data',
  ],
  drops: {
    group: `${NO_COLUMN} (a refund follows the user's group)`,
    private_data: `${NO_COLUMN} (upstream credentials of a task are not carried)`,
  },
  map(r) {
    return {
      row: {
        id: toInt(r.id),
        createdAt: toInt(r.created_at),
        updatedAt: toInt(r.updated_at),
        taskId: fit(toText(r.task_id), 191),
        platform: fit(toText(r.platform), 30),
        userId: toInt(r.user_id),
        channelId: toInt(r.channel_id),
        quota: toInt(r.quota),
        action: fit(toText(r.action), 40),
        status: fit(toText(r.status), 20),
        failReason: toText(r.fail_reason),
        submitTime: toInt(r.submit_time),
        startTime: toInt(r.start_time),
        finishTime: toInt(r.finish_time),
        progress: fit(toText(r.progress), 20),
        properties: toJson(r.properties),
        data: toJson(r.data),
      },
    };
  },
};

export const logMapping: TableMapping<NewLog> = {
  reads: [
    'id',
    'user_id',
    'created_at',
    'type',
    'content',
    'username',
    'token_name',
    'model_name',
    'quota',
    'prompt_tokens',
    'completion_tokens',
    'use_time',
    'is_stream',
    'channel_id',
    'token_id',
    'group',
    'ip',
    'request_id',
    'other',
    // one-api: milliseconds in `elapsed_time` instead of seconds in `use_time`
    'elapsed_time',
  ],
  drops: {
    system_prompt_reset: NO_COLUMN,
    upstream_request_id: NO_COLUMN,
  },
  map(r) {
    const useTime = r.use_time !== undefined ? toInt(r.use_time) : Math.round(toInt(r.elapsed_time) / 1000);
    return {
      row: {
        id: toInt(r.id),
        userId: toInt(r.user_id),
        createdAt: toInt(r.created_at),
        // new-api's refund logs (type 6) are system logs in Turnpike, as its own task refunds are.
        type: toInt(r.type) === 6 ? 4 : toInt(r.type),
        content: toText(r.content),
        username: fit(toText(r.username), 64),
        tokenName: fit(toText(r.token_name), 64),
        modelName: fit(toText(r.model_name), 255),
        quota: toInt(r.quota),
        promptTokens: toInt(r.prompt_tokens),
        completionTokens: toInt(r.completion_tokens),
        useTime,
        isStream: toBool(r.is_stream),
        channelId: toInt(r.channel_id),
        tokenId: toInt(r.token_id),
        group: fit(toText(r.group), 64),
        ip: fit(toText(r.ip), 64),
        requestId: toNullableText(fit(toText(r.request_id), 64)),
        other: toText(r.other),
      },
    };
  },
};

export const quotaDataMapping: TableMapping<NewQuotaData> = {
  reads: ['id', 'user_id', 'username', 'model_name', 'created_at', 'token_used', 'count', 'quota'],
  drops: {},
  map(r) {
    return {
      row: {
        id: toInt(r.id),
        userId: toInt(r.user_id),
        username: fit(toText(r.username), 64),
        modelName: fit(toText(r.model_name), 255),
        createdAt: toInt(r.created_at),
        tokenUsed: toInt(r.token_used),
        count: toInt(r.count),
        quota: toInt(r.quota),
      },
    };
  },
};

/** new-api's daily check-ins (model/checkin.go): the day's row and what it awarded, as they were. */
export const checkinMapping: TableMapping<NewCheckin> = {
  reads: ['id', 'user_id', 'checkin_date', 'quota_awarded', 'created_at'],
  drops: {},
  map(r) {
    const date = toText(r.checkin_date).trim();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return { skip: 'its date is not YYYY-MM-DD' };
    return {
      row: {
        id: toInt(r.id),
        userId: toInt(r.user_id),
        checkinDate: date,
        quotaAwarded: toInt(r.quota_awarded),
        createdAt: toInt(r.created_at),
      },
    };
  },
};

const isOneOf = <T extends string>(set: readonly T[], value: string): value is T =>
  (set as readonly string[]).includes(value);

/** new-api's plans (docs/adr/0049): the same fields, a plan of a duration or reset this gateway lacks skipped. */
export const subscriptionPlanMapping: TableMapping<NewSubscriptionPlan> = {
  reads: [
    'id',
    'title',
    'subtitle',
    'price_amount',
    'currency',
    'duration_unit',
    'duration_value',
    'custom_seconds',
    'enabled',
    'sort_order',
    'stripe_price_id',
    'creem_product_id',
    'max_purchase_per_user',
    'upgrade_group',
    'total_amount',
    'quota_reset_period',
    'quota_reset_custom_seconds',
    'created_at',
    'updated_at',
  ],
  drops: {
    allow_balance_pay: `${NO_COLUMN} (plans are paid through Epay, Stripe or Creem, not from the wallet)`,
    allow_wallet_overflow: `${NO_COLUMN} (the wallet always pays what the allowance cannot)`,
    downgrade_group: `${NO_COLUMN} (the group a user had before is restored)`,
    waffo_pancake_product_id: `${NO_COLUMN} (Waffo is not offered)`,
    waffo_pancake_product_type: `${NO_COLUMN} (Waffo is not offered)`,
    archived_at: `${NO_COLUMN} (a plan is turned off instead)`,
  },
  map(r) {
    const unit = toText(r.duration_unit) || 'month';
    const period = toText(r.quota_reset_period) || 'never';
    if (!isOneOf<PlanDurationUnit>(PLAN_DURATION_UNITS, unit))
      return { skip: `duration unit ${unit} is not offered` };
    if (!isOneOf<PlanResetPeriod>(PLAN_RESET_PERIODS, period))
      return { skip: `reset period ${period} is not offered` };
    return {
      row: {
        id: toInt(r.id),
        title: fit(toText(r.title), 128),
        subtitle: fit(toText(r.subtitle), 255),
        priceAmount: toNumber(r.price_amount),
        currency: fit(toText(r.currency) || 'USD', 8),
        durationUnit: unit,
        durationValue: toInt(r.duration_value, 1),
        customSeconds: toInt(r.custom_seconds),
        enabled: r.enabled === undefined || r.enabled === null ? true : toBool(r.enabled),
        sortOrder: toInt(r.sort_order),
        stripePriceId: fit(toText(r.stripe_price_id), 128),
        creemProductId: fit(toText(r.creem_product_id), 128),
        maxPurchasePerUser: toInt(r.max_purchase_per_user),
        upgradeGroup: fit(toText(r.upgrade_group), 64),
        totalAmount: toInt(r.total_amount),
        quotaResetPeriod: period,
        quotaResetCustomSeconds: toInt(r.quota_reset_custom_seconds),
        createdAt: toInt(r.created_at),
        updatedAt: toInt(r.updated_at),
      },
    };
  },
};

/** What a plan's subscriptions copy from it when carried: its reset period (new-api reads it from the plan). */
export interface PlanResetTerms {
  readonly quotaResetPeriod: PlanResetPeriod;
  readonly quotaResetCustomSeconds: number;
}

/**
 * new-api's users' subscriptions, with the reset terms of their plan copied in (as a purchase here copies them);
 * `amount_used` is carried by the importer into the allowance's current period, not into this row.
 */
export function userSubscriptionMapping(
  plans: ReadonlyMap<number, PlanResetTerms>,
): TableMapping<NewUserSubscription & { amountUsed: number }> {
  return {
    reads: [
      'id',
      'user_id',
      'plan_id',
      'amount_total',
      'amount_used',
      'start_time',
      'end_time',
      'status',
      'source',
      'upgrade_group',
      'prev_user_group',
      'created_at',
      'updated_at',
    ],
    drops: {
      last_reset_time: `${NO_COLUMN} (an allowance's periods are counted from the calendar or the start)`,
      next_reset_time: `${NO_COLUMN} (an allowance's periods are counted from the calendar or the start)`,
      reset_amount: NO_COLUMN,
      renewal_amount: NO_COLUMN,
    },
    map(r) {
      const plan = plans.get(toInt(r.plan_id));
      if (!plan) return { skip: 'its plan was not carried' };
      const status = toText(r.status) || 'active';
      return {
        row: {
          id: toInt(r.id),
          userId: toInt(r.user_id),
          planId: toInt(r.plan_id),
          amountTotal: toInt(r.amount_total),
          quotaResetPeriod: plan.quotaResetPeriod,
          quotaResetCustomSeconds: plan.quotaResetCustomSeconds,
          startTime: toInt(r.start_time),
          endTime: toInt(r.end_time),
          status: status === 'active' || status === 'expired' || status === 'cancelled' ? status : 'expired',
          source: fit(toText(r.source) || 'order', 32),
          upgradeGroup: fit(toText(r.upgrade_group), 64),
          prevUserGroup: fit(toText(r.prev_user_group), 64),
          createdAt: toInt(r.created_at),
          updatedAt: toInt(r.updated_at),
          amountUsed: toInt(r.amount_used),
        },
      };
    },
  };
}

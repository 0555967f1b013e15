/**
 * Daily check-ins as the reference offers them (`checkin_setting.*`): once a day per user a quota drawn between
 * the minimum and the maximum is added to the balance, with a system log saying so. The day is the calendar day in
 * `QuotaWindowTimeZone`. The day's row, the credit and the log commit together; the unique index on (user, day)
 * lets exactly one of any number of simultaneous check-ins through.
 */
import type { CheckinResult, CheckinStatus } from '@turnpike/core/contracts/checkin';
import type { User } from '@turnpike/core/db/schema/users';
import { AppError } from '@turnpike/core/errors';
import { createCheckinRepo } from '@turnpike/core/repos/checkin.repo';
import { createLogRepo } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import type { AppDeps } from '../../deps.ts';
import { formatQuota } from '../../http/quota-text.ts';

export interface CheckinServiceOptions {
  /** The clock (tests move it to the next day). */
  readonly now?: () => Date;
  /** A number in [0, 1), as Math.random. */
  readonly random?: () => number;
}

/** `YYYY-MM-DD` of `at` in a time zone. */
export function dayIn(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/** The range with its ends in order and not below 0 (the reference reads an inverted range the other way round). */
export function quotaRange(min: number, max: number): [number, number] {
  const low = Math.max(0, min);
  const high = Math.max(0, max);
  return low <= high ? [low, high] : [high, low];
}

export function createCheckinService(deps: AppDeps, options: CheckinServiceOptions = {}) {
  const o = deps.options;
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const repo = createCheckinRepo(deps.db);

  function refuseUnlessEnabled(): void {
    if (!o.get('checkin_setting.enabled')) throw new AppError('FEATURE_DISABLED', 'check-in is not enabled');
  }

  return {
    async status(user: User, month?: string): Promise<CheckinStatus> {
      refuseUnlessEnabled();
      const today = dayIn(now(), o.get('QuotaWindowTimeZone'));
      const asked = month ?? today.slice(0, 7);
      const [records, totals, checkedIn] = await Promise.all([
        repo.between(user.id, `${asked}-01`, `${asked}-31`),
        repo.totals(user.id),
        repo.has(user.id, today),
      ]);
      const [min, max] = quotaRange(o.get('checkin_setting.min_quota'), o.get('checkin_setting.max_quota'));
      return {
        enabled: true,
        min_quota: min,
        max_quota: max,
        stats: {
          total_quota: totals.quota,
          total_checkins: totals.count,
          checkin_count: records.length,
          checked_in_today: checkedIn,
          records: records.map((r) => ({ checkin_date: r.checkinDate, quota_awarded: r.quotaAwarded })),
        },
      };
    },

    async checkin(user: User): Promise<CheckinResult> {
      refuseUnlessEnabled();
      const at = now();
      const date = dayIn(at, o.get('QuotaWindowTimeZone'));
      const [min, max] = quotaRange(o.get('checkin_setting.min_quota'), o.get('checkin_setting.max_quota'));
      const quota = min + Math.floor(random() * (max - min + 1));
      const quotaPerUnit = o.get('QuotaPerUnit');
      const awarded = await deps.db.transaction(async (tx) => {
        const row = await createCheckinRepo(tx).claim({
          userId: user.id,
          checkinDate: date,
          quotaAwarded: quota,
          createdAt: Math.floor(at.getTime() / 1000),
        });
        if (!row) return undefined;
        await createUserRepo(tx).addQuota(user.id, quota);
        await createLogRepo(tx).system(
          user.id,
          user.username,
          `daily check-in: ${formatQuota(quota, quotaPerUnit)} awarded`,
        );
        return row;
      });
      if (!awarded) throw new AppError('CONFLICT', 'you have already checked in today');
      await deps.bus.publish({ type: 'users.changed', ids: [user.id] });
      return { quota_awarded: awarded.quotaAwarded, checkin_date: awarded.checkinDate };
    },
  };
}

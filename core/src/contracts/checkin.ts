import { z } from 'zod';

/** `GET /api/user/checkin?month=YYYY-MM`: the month whose check-ins are listed; absent, the current one. */
export const checkinQuerySchema = z.object({
  month: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string({ error: 'month must be YYYY-MM' })
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'month must be YYYY-MM')
      .optional(),
  ),
});

/** One check-in as the history lists it (the reference's record: no id, no user). */
export interface CheckinRecord {
  checkin_date: string;
  quota_awarded: number;
}

/** `GET /api/user/checkin`: the switch, the range and the caller's history, in the reference's shape. */
export interface CheckinStatus {
  enabled: boolean;
  min_quota: number;
  max_quota: number;
  stats: {
    /** Quota every check-in of the user awarded, all time. */
    total_quota: number;
    total_checkins: number;
    /** Check-ins in the month asked for. */
    checkin_count: number;
    checked_in_today: boolean;
    /** The month's check-ins, newest first. */
    records: CheckinRecord[];
  };
}

/** `POST /api/user/checkin`: what today's check-in awarded. */
export interface CheckinResult {
  quota_awarded: number;
  checkin_date: string;
}

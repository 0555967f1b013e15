import { HEX, randomString } from '../crypto/random.ts';

/** Redemption code statuses: a used code never changes again. */
export const RedemptionStatus = { Unused: 1, Disabled: 2, Used: 3 } as const;
export type RedemptionStatus = (typeof RedemptionStatus)[keyof typeof RedemptionStatus];

/** A new redemption code: 32 hex characters from the platform CSPRNG. */
export const generateRedemptionKey = (): string => randomString(32, HEX);

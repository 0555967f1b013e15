import { HEX, randomString } from '../crypto/random.ts';

export { RedemptionStatus } from './closed-sets.ts';

/** A new redemption code: 32 hex characters from the platform CSPRNG. */
export const generateRedemptionKey = (): string => randomString(32, HEX);

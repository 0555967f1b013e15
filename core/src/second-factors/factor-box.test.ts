import { describe, expect, it } from 'vitest';
import { createChannelKeyBox } from '../channels/channel-key.ts';
import { createSecondFactorKeys } from './factor-box.ts';

describe('second-factor keys', () => {
  it('seals a TOTP secret so that only the same CRYPTO_SECRET opens it, and not as a channel key', () => {
    const keys = createSecondFactorKeys('crypto-secret-one-0123456789');
    const sealed = keys.sealSecret('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(sealed).not.toContain('GEZDGNBV');
    expect(keys.openSecret(sealed)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(createSecondFactorKeys('crypto-secret-two-0123456789').openSecret(sealed)).toBeUndefined();
    expect(createChannelKeyBox('crypto-secret-one-0123456789').open(sealed)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { usableGroups } from './groups.ts';

describe('usableGroups', () => {
  it("adds the user's own group to the selectable ones with its ratio", () => {
    expect(usableGroups({ default: 'Default' }, { default: 1, vip: 2 }, 'vip')).toEqual({
      default: { ratio: 1, desc: 'Default' },
      vip: { ratio: 2, desc: 'your group' },
    });
  });

  it('shows a visitor only the selectable groups', () => {
    expect(Object.keys(usableGroups({ default: 'Default', vip: 'VIP' }, { default: 1 }))).toEqual([
      'default',
      'vip',
    ]);
  });

  it('prices a group without a ratio at 1', () => {
    expect(usableGroups({ svip: 'SVIP' }, {})).toEqual({ svip: { ratio: 1, desc: 'SVIP' } });
  });
});

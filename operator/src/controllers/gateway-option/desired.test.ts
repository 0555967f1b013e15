import { describe, expect, it } from 'vitest';
import type { GatewayOptionResource } from '../../api/v1alpha1.ts';
import { desiredOptions } from './desired.ts';

const resource = (values: Record<string, string>): GatewayOptionResource => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'GatewayOption',
  metadata: { name: 'o', namespace: 'ns', generation: 1 },
  spec: { values },
});

describe('desired options', () => {
  it('accepts the limits of groups, models and every user', () => {
    const result = desiredOptions(
      resource({
        RateLimitGroups: '{"vip": {"rpm": 600, "tpm": 2000000, "concurrency": 16}}',
        RateLimitModels: '{"claude-opus-4": {"concurrency": 4}}',
        RateLimitUserDefault: '{"tpm": 100000}',
      }),
    );
    expect(result).toEqual({
      ok: true,
      values: [
        { key: 'RateLimitGroups', entry: '', text: '{"vip":{"rpm":600,"tpm":2000000,"concurrency":16}}' },
        { key: 'RateLimitModels', entry: '', text: '{"claude-opus-4":{"concurrency":4}}' },
        { key: 'RateLimitUserDefault', entry: '', text: '{"tpm":100000}' },
      ],
    });
  });

  it('normalises values as the registry stores them', () => {
    const result = desiredOptions(
      resource({ SystemName: 'Acme', GroupRatio: '{ "default": 1, "vip": 0.5 }' }),
    );
    expect(result).toEqual({
      ok: true,
      values: [
        { key: 'GroupRatio', entry: '', text: '{"default":1,"vip":0.5}' },
        { key: 'SystemName', entry: '', text: 'Acme' },
      ],
    });
  });

  it.each([
    [
      'an unknown key, suggesting the near one',
      { systemname: 'x' },
      'UnknownOption',
      'did you mean SystemName',
    ],
    ['a value of the wrong type', { QuotaRemindThreshold: 'many' }, 'InvalidOption', 'QuotaRemindThreshold'],
    ['GroupRatio without the default group', { GroupRatio: '{"vip":1}' }, 'InvalidOption', '"default" group'],
    ['a price map', { ModelRatio: '{}' }, 'InvalidOption', 'ModelPrice'],
    ['a secret such as an SMTP token', { SMTPToken: 'hunter2' }, 'SecretOption', 'set it in the console'],
    [
      'a negative tokens-per-minute limit of a group',
      { RateLimitGroups: '{"vip":{"tpm":-1}}' },
      'InvalidOption',
      'must be 0 or more',
    ],
  ])('refuses %s', (_name, values, reason, message) => {
    const result = desiredOptions(resource(values));
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok) expect(result.message).toContain(message);
  });
});

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
  ])('refuses %s', (_name, values, reason, message) => {
    const result = desiredOptions(resource(values));
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok) expect(result.message).toContain(message);
  });
});

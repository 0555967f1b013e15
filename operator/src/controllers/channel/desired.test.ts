import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import { ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import type { ChannelResource, ChannelSpec, SecretObject } from '../../api/v1alpha1.ts';
import { desiredChannels, resolveProviderType } from './desired.ts';

const resource = (spec: Partial<ChannelSpec> = {}): ChannelResource => ({
  apiVersion: 'turnpike.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name: 'openai', namespace: 'team-a', generation: 3 },
  spec: { type: 'openai', keySecretRef: { name: 'openai-key' }, models: ['gpt-4o'], ...spec },
});

const secret = (data: Record<string, string>): SecretObject => ({
  metadata: { name: 'openai-key', namespace: 'team-a', resourceVersion: '7' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

describe('provider types', () => {
  it.each([
    ['openai', ProviderTypeId.OpenAI],
    ['anthropic', ProviderTypeId.Anthropic],
    ['azure', ProviderTypeId.Azure],
    ['claude', ProviderTypeId.Anthropic],
    ['vertexai', ProviderTypeId.VertexAi],
    [14, ProviderTypeId.Anthropic],
    ['14', ProviderTypeId.Anthropic],
    ['acme', undefined],
    [9999, undefined],
  ])('%s is provider %s', (type, expected) => {
    expect(resolveProviderType(type)).toBe(expected);
  });
});

describe('desired channel rows', () => {
  it('maps every console field from the spec, with the key from the Secret', () => {
    const result = desiredChannels(
      resource({
        baseURL: 'https://api.example.com/',
        groups: ['default', 'vip'],
        priority: 5,
        weight: 3,
        tag: 'prod',
        modelMapping: { 'gpt-4': 'gpt-4o' },
        statusCodeMapping: { '429': '503' },
        headers: { 'x-team': 'a' },
        paramOverride: { temperature: 0.2 },
        proxy: 'socks5://proxy:1080',
        testModel: 'gpt-4o',
        autoBan: false,
        maxInputTokens: 1000,
      }),
      secret({ apiKey: 'sk-one' }),
    );
    expect(result).toEqual({
      ok: true,
      type: ProviderTypeId.OpenAI,
      rows: [
        {
          name: 'team-a/openai',
          type: ProviderTypeId.OpenAI,
          key: 'sk-one',
          baseUrl: 'https://api.example.com',
          other: '',
          openaiOrganization: null,
          testModel: 'gpt-4o',
          models: 'gpt-4o',
          group: 'default,vip',
          priority: 5,
          weight: 3,
          tag: 'prod',
          status: ChannelStatus.Enabled,
          autoBan: 0,
          maxInputTokens: 1000,
          rpmLimit: 0,
          tpmLimit: 0,
          concurrencyLimit: 0,
          modelMapping: '{"gpt-4":"gpt-4o"}',
          statusCodeMapping: '{"429":"503"}',
          setting: '{"headers":{"x-team":"a"},"proxy":"socks5://proxy:1080"}',
          paramOverride: '{"temperature":0.2}',
        },
      ],
    });
  });

  it("carries the channel's limits, none when the spec sets none", () => {
    const limited = desiredChannels(
      resource({ limits: { tpm: 400_000, concurrency: 8 } }),
      secret({ apiKey: 'sk-one' }),
    );
    expect(limited.ok && limited.rows[0]).toMatchObject({
      rpmLimit: 0,
      tpmLimit: 400_000,
      concurrencyLimit: 8,
    });
    const plain = desiredChannels(resource(), secret({ apiKey: 'sk-one' }));
    expect(plain.ok && plain.rows[0]).toMatchObject({ rpmLimit: 0, tpmLimit: 0, concurrencyLimit: 0 });
  });

  it('makes one multi-key channel of several key lines, picking keys as keySelection says', () => {
    const result = desiredChannels(
      resource({ keySelection: 'polling' }),
      secret({ apiKey: 'sk-1\nsk-2\n\n sk-3 ' }),
    );
    expect(result.ok && result.rows).toEqual([
      expect.objectContaining({
        name: 'team-a/openai',
        multiKey: { keys: ['sk-1', 'sk-2', 'sk-3'], mode: 'polling' },
      }),
    ]);
    const single = desiredChannels(resource(), secret({ apiKey: 'sk-1' }));
    expect(single.ok && single.rows[0]?.multiKey).toBeUndefined();
  });

  it('reads a JSON array of Vertex AI service accounts as one key each', () => {
    const docs = [
      { type: 'service_account', client_email: 'a@p' },
      { type: 'service_account', client_email: 'b@p' },
    ];
    const result = desiredChannels(
      resource({ type: 'vertexai', other: 'us-east5' }),
      secret({ apiKey: JSON.stringify(docs) }),
    );
    expect(result.ok && result.rows[0]?.multiKey?.keys.map((k) => JSON.parse(k).client_email)).toEqual([
      'a@p',
      'b@p',
    ]);
  });

  it('keeps a Vertex AI service account document whole', () => {
    const doc = '{\n "type": "service_account"\n}';
    const result = desiredChannels(
      resource({ type: 'vertexai', other: 'us-east5' }),
      secret({ apiKey: doc }),
    );
    expect(result.ok && result.rows.map((r) => r.key)).toEqual([doc.trim()]);
  });

  it('disables the row when the resource says enabled: false', () => {
    const result = desiredChannels(resource({ enabled: false }), secret({ apiKey: 'k' }));
    expect(result.ok && result.rows[0]?.status).toBe(ChannelStatus.ManuallyDisabled);
  });

  it.each([
    ['an unknown provider', resource({ type: 'acme' }), secret({ apiKey: 'k' }), 'Valid', 'UnknownProvider'],
    ['a missing Secret', resource(), undefined, 'KeyResolved', 'SecretNotFound'],
    ['a Secret without the key', resource(), secret({ other: 'k' }), 'KeyResolved', 'SecretKeyMissing'],
    ['an empty key', resource(), secret({ apiKey: '  \n' }), 'KeyResolved', 'SecretKeyEmpty'],
    [
      'Vertex AI without a region',
      resource({ type: 'vertexai' }),
      secret({ apiKey: 'k' }),
      'Valid',
      'InvalidSpec',
    ],
    [
      'a status code mapping to a word',
      resource({ statusCodeMapping: { '429': 'x' } }),
      secret({ apiKey: 'k' }),
      'Valid',
      'InvalidSpec',
    ],
  ])('refuses %s with a reason and writes nothing', (_name, res, sec, condition, reason) => {
    const result = desiredChannels(res, sec);
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ condition, reason });
    if (!result.ok) expect(result.message).not.toContain('sk-');
  });

  it('refuses a type the relay cannot serve, Ready=False with the reason: PaLM 2 naming Gemini (24)', () => {
    const palm = desiredChannels(resource({ type: 'palm2' }), secret({ apiKey: 'k' }));
    expect(palm).toMatchObject({ ok: false, condition: 'Valid', reason: 'RetiredProvider' });
    if (!palm.ok) expect(palm.message).toMatch(/retired.*Gemini \(24\)/);
  });

  it("refuses iFlytek Spark's WebSocket key, naming the HTTP APIPassword, and takes the APIPassword", () => {
    const old = desiredChannels(resource({ type: 'xunfei' }), secret({ apiKey: 'appid|secret|key' }));
    expect(old).toMatchObject({ ok: false, condition: 'KeyResolved', reason: 'UnusableKey' });
    if (!old.ok) expect(old.message).toMatch(/APIPassword/);
    if (!old.ok) expect(old.message).not.toContain('appid|secret|key');
    expect(desiredChannels(resource({ type: 'xunfei' }), secret({ apiKey: 'pass:word' })).ok).toBe(true);
  });

  it('accepts the video task types by their reference numbers: Gemini Veo (60), Kling (50), Jimeng (51), Vidu (52), Doubao video (54), Sora (55)', () => {
    const veo = desiredChannels(
      resource({ type: 60, models: ['veo-3.0-generate-001'] }),
      secret({ apiKey: 'k' }),
    );
    expect(veo).toMatchObject({ ok: true, type: ProviderTypeId.GeminiVeo });
    const kling = desiredChannels(
      resource({ type: '50', models: ['kling-v2-1'] }),
      secret({ apiKey: 'ak|sk' }),
    );
    expect(kling).toMatchObject({ ok: true, type: ProviderTypeId.Kling });
    for (const [type, apiKey] of [
      [51, 'AKLT|sk'],
      [52, 'vda_1'],
      [54, 'ark-key'],
      [55, 'sk-1'],
    ] as const)
      expect(
        desiredChannels(resource({ type, models: ['m'] }), secret({ apiKey })),
        String(type),
      ).toMatchObject({
        ok: true,
        type,
      });
    // A Jimeng key without its secret half cannot sign a call: refused, never applied.
    expect(desiredChannels(resource({ type: 51, models: ['m'] }), secret({ apiKey: 'AKLT' })).ok).toBe(false);
  });

  it('reads the key named in keySecretRef.key', () => {
    const result = desiredChannels(
      resource({ keySecretRef: { name: 'openai-key', key: 'token' } }),
      secret({ token: 'sk-t' }),
    );
    expect(result.ok && result.rows[0]?.key).toBe('sk-t');
  });
});

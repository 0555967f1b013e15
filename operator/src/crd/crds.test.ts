import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CRD_DIR, createCrdValidators, lintStructural, loadCrds } from './validate.ts';

const validators = createCrdValidators();
const EXAMPLES = path.resolve(CRD_DIR, '../deploy/examples');

function validate(kind: 'channels' | 'modelprices' | 'gatewayoptions', spec: unknown) {
  const validator = validators.get(kind);
  if (!validator) throw new Error(`no CRD for ${kind}`);
  return validator.validate({ apiVersion: 'turnpike.dev/v1alpha1', kind, metadata: { name: 'x' }, spec });
}

const channel = (extra: Record<string, unknown> = {}) => ({
  type: 'openai',
  keySecretRef: { name: 'openai' },
  models: ['gpt-4o'],
  ...extra,
});

/** The messages of a refusal, or [] when the object was accepted. */
function refusals(result: ReturnType<typeof validate>): string[] {
  return result.ok ? [] : result.causes.map((c) => `${c.field}: ${c.message}`);
}

describe('CRD definitions', () => {
  const crds = loadCrds();

  it('ships Channel, ModelPrice and GatewayOption in turnpike.dev/v1alpha1, namespaced, with short names', () => {
    expect(crds.map((c) => c.spec.names.kind).sort()).toEqual(['Channel', 'GatewayOption', 'ModelPrice']);
    for (const crd of crds) {
      expect(crd.spec.group).toBe('turnpike.dev');
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.turnpike.dev`);
      expect(crd.spec.names.shortNames?.length).toBeGreaterThan(0);
      const [version] = crd.spec.versions;
      expect(version?.name).toBe('v1alpha1');
      expect(version?.subresources?.status).toEqual({});
      expect(version?.additionalPrinterColumns?.map((c) => c.name)).toEqual(
        expect.arrayContaining(['Ready', 'Reason', 'Relays', 'Age']),
      );
    }
  });

  it('has structural schemas: every node typed, no properties beside additionalProperties', () => {
    for (const crd of crds)
      expect(lintStructural(crd.spec.versions[0]!.schema.openAPIV3Schema), crd.metadata.name).toEqual([]);
  });

  it('bounds every list and map a CEL rule walks', () => {
    const unbounded: string[] = [];
    const walk = (node: Record<string, unknown>, at: string) => {
      if (node.type === 'array' && node.maxItems === undefined && at.includes('spec')) unbounded.push(at);
      if (node.type === 'object' && node.additionalProperties && node.maxProperties === undefined)
        unbounded.push(at);
      for (const [k, v] of Object.entries((node.properties as Record<string, object>) ?? {}))
        walk(v as Record<string, unknown>, `${at}.${k}`);
    };
    for (const crd of crds) walk(crd.spec.versions[0]!.schema.openAPIV3Schema, crd.spec.names.kind);
    expect(unbounded).toEqual([]);
  });
});

describe('deploy/examples', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml'));

  it.each(files)('%s is accepted by the CRDs', (file) => {
    const docs = parseAllDocuments(readFileSync(path.join(EXAMPLES, file), 'utf8')).map((d) => d.toJS());
    const custom = docs.filter((d) => d.apiVersion === 'turnpike.dev/v1alpha1');
    expect(custom.length).toBeGreaterThan(0);
    for (const doc of custom) {
      const plural = `${String(doc.kind).toLowerCase()}s`;
      const result = validators.get(plural)!.validate(doc);
      expect(result.ok ? [] : result.causes, `${file} ${doc.metadata.name}`).toEqual([]);
    }
  });
});

describe('Channel validation', () => {
  it('fills in the defaults an administrator leaves out', () => {
    const result = validate('channels', channel());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.object.spec).toMatchObject({
      keySecretRef: { name: 'openai', key: 'apiKey' },
      groups: ['default'],
      priority: 0,
      weight: 0,
      enabled: true,
      autoBan: true,
      maxInputTokens: 0,
    });
  });

  it('accepts limits of the channel', () => {
    expect(
      refusals(validate('channels', channel({ limits: { rpm: 600, tpm: 1_000_000, concurrency: 0 } }))),
    ).toEqual([]);
  });

  it('accepts a provider by name or by number', () => {
    expect(refusals(validate('channels', channel({ type: 'anthropic' })))).toEqual([]);
    expect(refusals(validate('channels', channel({ type: 14 })))).toEqual([]);
  });

  it.each([
    [
      'an inline key instead of a Secret',
      { keySecretRef: undefined, key: 'sk-1' },
      'spec.keySecretRef: Required',
    ],
    ['no models', { models: [] }, 'spec.models'],
    ['a negative weight', { weight: -1 }, 'spec.weight'],
    ['a provider number of 0', { type: 0 }, 'type is a lower-case provider name'],
    ['a provider name in capitals', { type: 'OpenAI' }, 'type is a lower-case provider name'],
    ['a base URL that is no URL', { baseURL: 'ftp://x' }, 'baseURL must be an http(s) URL'],
    [
      'a status code mapping to a word',
      { statusCodeMapping: { '429': 'bad' } },
      'statusCodeMapping must map',
    ],
    ['a status code mapping from 700', { statusCodeMapping: { '700': '500' } }, 'statusCodeMapping must map'],
    ['a model mapped to nothing', { modelMapping: { 'gpt-4': '' } }, 'modelMapping must map'],
    ['a group with a comma', { groups: ['a,b'] }, 'spec.groups'],
    ['a proxy that is no URL', { proxy: 'localhost:8080' }, 'proxy must be'],
    ['a negative limit', { limits: { tpm: -1 } }, 'spec.limits.tpm'],
    ['a fractional limit', { limits: { concurrency: 1.5 } }, 'spec.limits.concurrency'],
    ['a limit its column cannot hold', { limits: { rpm: 2 ** 31 } }, 'spec.limits.rpm'],
  ])('refuses %s', (_name, extra, expected) => {
    // JSON drops the undefined fields, as kubectl would never send them.
    const messages = refusals(validate('channels', JSON.parse(JSON.stringify(channel(extra)))));
    expect(messages.join('\n')).toContain(expected);
  });
});

describe('ModelPrice validation', () => {
  it.each([
    ['ratio mode', { models: ['a'], ratio: { model: '0.75', completion: '3' } }],
    ['token prices', { models: ['a'], price: { input: '2.5', output: '10', cacheRead: '1.25' } }],
    ['a per-call price', { models: ['a'], price: { perCall: '0.04' } }],
    ['a price per group', { models: ['a'], groups: ['vip'], price: { perCall: '1' } }],
    ['cache-write prices', { models: ['a'], price: { input: '3', cacheRead: '0.3', cacheWrite: '3.75' } }],
    ['a cache-write ratio', { models: ['a'], ratio: { model: '1', cacheWrite: '1.25' } }],
    [
      'a 1-hour cache-write price',
      { models: ['a'], price: { input: '3', cacheWrite: '3.75', cacheWrite1h: '6' } },
    ],
    ['a 1-hour cache-write ratio', { models: ['a'], ratio: { model: '1.5', cacheWrite1h: '2' } }],
    [
      'long-context tiers, service tiers and fees',
      {
        models: ['a'],
        price: { input: '3', output: '15' },
        longContext: [
          { above: 200000, input: '2', output: '1.5' },
          { above: 1000000, input: '4', output: '2', cache: '4' },
        ],
        serviceTiers: { priority: '2', flex: '0.5', 'scale-1': '0' },
        fees: { webSearch: '0.01', image: '0.039' },
      },
    ],
    [
      'a per-search fee on a per-call price',
      { models: ['a'], price: { perCall: '0.04' }, fees: { webSearch: '0.01' } },
    ],
  ])('accepts %s', (_name, spec) => {
    expect(refusals(validate('modelprices', spec))).toEqual([]);
  });

  it.each([
    ['both modes', { models: ['a'], ratio: { model: '1' }, price: { perCall: '1' } }, 'exactly one of ratio'],
    ['neither mode', { models: ['a'] }, 'exactly one of ratio'],
    ['a float instead of a decimal string', { models: ['a'], ratio: { model: 0.75 } }, 'spec.ratio.model'],
    ['an exponent', { models: ['a'], ratio: { model: '1e3' } }, 'spec.ratio.model'],
    ['a negative price', { models: ['a'], price: { input: '-1' } }, 'spec.price.input'],
    ['per-call beside token prices', { models: ['a'], price: { perCall: '1', input: '2' } }, 'stands alone'],
    ['output without input', { models: ['a'], price: { output: '2' } }, 'need at least input'],
    ['no models', { models: [], ratio: { model: '1' } }, 'spec.models'],
    ['a group name with a slash', { models: ['a'], groups: ['a/b'], ratio: { model: '1' } }, 'spec.groups'],
    [
      'a cache write beside a per-call price',
      { models: ['a'], price: { perCall: '1', cacheWrite: '1' } },
      'stands alone',
    ],
    [
      'a 1-hour cache write beside a per-call price',
      { models: ['a'], price: { perCall: '1', cacheWrite1h: '1' } },
      'stands alone',
    ],
    [
      'a 1-hour cache-write ratio that is no decimal',
      { models: ['a'], ratio: { model: '1', cacheWrite1h: '2x' } },
      'spec.ratio.cacheWrite1h',
    ],
    [
      'two long-context tiers at the same threshold',
      {
        models: ['a'],
        ratio: { model: '1' },
        longContext: [
          { above: 200000, input: '2', output: '1.5' },
          { above: 200000, input: '3', output: '2' },
        ],
      },
      'two long-context tiers start at the same number of tokens',
    ],
    [
      'a long-context multiplier of 0',
      {
        models: ['a'],
        ratio: { model: '1' },
        longContext: [{ above: 200000, input: '0.000', output: '1.5' }],
      },
      'a long-context multiplier must be more than 0',
    ],
    [
      'a tier without its output multiplier',
      { models: ['a'], ratio: { model: '1' }, longContext: [{ above: 200000, input: '2' }] },
      'spec.longContext.0.output: Required',
    ],
    [
      'a threshold of 0 tokens',
      { models: ['a'], ratio: { model: '1' }, longContext: [{ above: 0, input: '2', output: '2' }] },
      'spec.longContext.0.above: must be >= 1',
    ],
    [
      'a multiplier as a float',
      { models: ['a'], ratio: { model: '1' }, longContext: [{ above: 1, input: 2, output: '2' }] },
      'spec.longContext.0.input: must be string',
    ],
    [
      'a service tier in capitals',
      { models: ['a'], ratio: { model: '1' }, serviceTiers: { Priority: '2' } },
      'a service tier is lower-case letters',
    ],
    [
      'a negative service-tier multiplier',
      { models: ['a'], ratio: { model: '1' }, serviceTiers: { flex: '-0.5' } },
      'spec.serviceTiers.flex',
    ],
    ['no fee at all', { models: ['a'], ratio: { model: '1' }, fees: {} }, 'spec.fees'],
    [
      'fees for some groups',
      { models: ['a'], groups: ['vip'], ratio: { model: '1' }, fees: { webSearch: '0.01' } },
      'apply to every group',
    ],
    [
      'service tiers on a per-call price',
      { models: ['a'], price: { perCall: '1' }, serviceTiers: { priority: '2' } },
      'a per-call price has no tokens',
    ],
    [
      'long-context tiers on a per-call price',
      { models: ['a'], price: { perCall: '1' }, longContext: [{ above: 1, input: '2', output: '2' }] },
      'a per-call price has no tokens',
    ],
  ])('refuses %s', (_name, spec, expected) => {
    expect(refusals(validate('modelprices', spec)).join('\n')).toContain(expected);
  });
});

describe('GatewayOption validation', () => {
  it('accepts option keys with text values', () => {
    expect(
      refusals(validate('gatewayoptions', { values: { SystemName: 'Acme', 'oidc.enabled': 'false' } })),
    ).toEqual([]);
  });

  it.each([
    ['a price map', { values: { ModelRatio: '{}' } }, 'ModelPrice resources'],
    ['a number instead of text', { values: { QuotaRemindThreshold: 5 } }, 'spec.values.QuotaRemindThreshold'],
    ['no values', { values: {} }, 'spec.values'],
    ['a key that is no name', { values: { 'bad key': 'x' } }, 'option keys are names'],
  ])('refuses %s', (_name, spec, expected) => {
    expect(refusals(validate('gatewayoptions', spec)).join('\n')).toContain(expected);
  });
});

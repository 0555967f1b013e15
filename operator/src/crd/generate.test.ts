import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { CRD_FOLDERS, generatedCrds, staleCrds } from './generate.ts';
import { openApiSchemaOf } from './render.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('the CRDs generated from operator/src/api/v1alpha1.ts', () => {
  const copies: string[] = [];
  afterEach(() => {
    for (const copy of copies.splice(0)) rmSync(copy, { recursive: true, force: true });
  });

  /** A copy of the committed CRD folders, to plant a drift in. */
  function copyOfTree(): string {
    const copy = mkdtempSync(path.join(tmpdir(), 'crds-'));
    copies.push(copy);
    for (const folder of CRD_FOLDERS)
      cpSync(path.join(ROOT, folder), path.join(copy, folder), { recursive: true });
    return copy;
  }

  it('are committed as generated, in crds/ and in the chart', () => {
    expect(staleCrds()).toEqual([]);
  });

  it('catches a hand edit, a missing file and a file no resource declares', () => {
    const copy = copyOfTree();
    const channels = path.join(copy, 'crds/turnpike.dev_channels.yaml');
    writeFileSync(channels, readFileSync(channels, 'utf8').replace('maxItems: 500', 'maxItems: 501'));
    rmSync(path.join(copy, 'charts/turnpike-crds/files/crds/turnpike.dev_modelprices.yaml'));
    writeFileSync(path.join(copy, 'crds/turnpike.dev_widgets.yaml'), 'kind: CustomResourceDefinition\n');
    expect(staleCrds(copy)).toEqual([
      'charts/turnpike-crds/files/crds/turnpike.dev_modelprices.yaml',
      'crds/turnpike.dev_channels.yaml',
      'crds/turnpike.dev_widgets.yaml',
    ]);
  });

  it('write the same CRD into both folders', () => {
    const files = generatedCrds();
    for (const name of [
      'turnpike.dev_channels.yaml',
      'turnpike.dev_modelprices.yaml',
      'turnpike.dev_gatewayoptions.yaml',
    ])
      expect(files.get(`charts/turnpike-crds/files/crds/${name}`)).toBe(files.get(`crds/${name}`));
  });

  it('keep the CEL rules, defaults and Kubernetes list types of the declaration', () => {
    const channels = parse(generatedCrds().get('crds/turnpike.dev_channels.yaml') as string);
    const spec = channels.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec.required.sort()).toEqual(['keySecretRef', 'models', 'type']);
    expect(spec.properties.type).toEqual({
      description: expect.any(String),
      'x-kubernetes-int-or-string': true,
      'x-kubernetes-validations': [
        {
          rule: "type(self) == int ? self > 0 : self.matches('^[a-z][a-z0-9]{1,31}$')",
          message: 'type is a lower-case provider name such as openai, or a provider number above 0',
        },
      ],
    });
    expect(spec.properties.groups).toEqual({
      type: 'array',
      default: ['default'],
      maxItems: 64,
      'x-kubernetes-list-type': 'set',
      items: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^,\\s]+$' },
    });
    expect(spec.properties.priority).toEqual({ type: 'integer', format: 'int64', default: 0 });
    expect(spec.properties.paramOverride).toEqual({
      type: 'object',
      description: 'Request fields overridden on every call (JSON object).',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });
});

describe('openApiSchemaOf', () => {
  it('refuses a JSON Schema word a structural schema has no place for', () => {
    expect(() => openApiSchemaOf(z.object({ a: z.string() }).meta({ title: 'A' }))).toThrow(
      /no CRD word for title/,
    );
  });

  it('keeps bounds a declaration sets and drops the ones zod adds to every integer', () => {
    expect(openApiSchemaOf(z.int())).toEqual({ type: 'integer' });
    expect(openApiSchemaOf(z.int().min(0).max(2147483647))).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: 2147483647,
    });
  });
});

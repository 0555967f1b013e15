/**
 * Turns the declaration of a custom resource (its zod schemas, names and printer columns, operator/src/api/) into
 * the CustomResourceDefinition the API server reads. zod writes the JSON Schema; this file keeps from it what a
 * structural schema allows (docs/adr/0048): integers lose zod's safe-integer bounds, int-or-string loses its
 * `anyOf`, a map that keeps unknown fields loses its `additionalProperties`, and the keys of every node come in
 * one reading order. The Kubernetes words (`x-kubernetes-*`, `format`, `maxProperties`) come from `.meta()`.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import type { CustomResourceDefinition, SchemaNode } from './validate.ts';

/** One column of `kubectl get`. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean' | 'date' | 'number';
  readonly jsonPath: string;
}

/** Everything one CRD says, in one place. */
export interface ResourceDeclaration {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly description: string;
  readonly printerColumns: readonly PrinterColumn[];
  readonly spec: z.ZodType;
  readonly status: z.ZodType;
}

const KEY_ORDER = [
  'type',
  'description',
  'required',
  'format',
  'enum',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
  'properties',
  'items',
  'additionalProperties',
];

/** zod's bounds of `z.int()`, which say nothing the API server needs. */
const isSafeBound = (value: unknown) =>
  value === Number.MAX_SAFE_INTEGER || value === Number.MIN_SAFE_INTEGER;

function toStructural(node: Record<string, unknown>): SchemaNode {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(node);
  const unknownKeys = keys.filter((key) => !KEY_ORDER.includes(key));
  if (unknownKeys.length > 0) throw new Error(`no CRD word for ${unknownKeys.join(', ')}`);
  for (const key of KEY_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if ((key === 'minimum' || key === 'maximum') && isSafeBound(value)) continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Record<string, unknown>>).map(([name, child]) => [
          name,
          toStructural(child),
        ]),
      );
    } else if (key === 'items') out.items = toStructural(value as Record<string, unknown>);
    else if (key === 'additionalProperties') {
      if (!node['x-kubernetes-preserve-unknown-fields'])
        out.additionalProperties = toStructural(value as Record<string, unknown>);
    } else out[key] = value;
  }
  return out as SchemaNode;
}

/** The OpenAPI v3 schema of one zod schema, as a CRD holds it. */
export function openApiSchemaOf(schema: z.ZodType): SchemaNode {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    target: 'openapi-3.0',
    override: ({ jsonSchema }) => {
      const node = jsonSchema as Record<string, unknown>;
      if (node['x-kubernetes-int-or-string']) delete node.anyOf;
    },
  }) as Record<string, unknown>;
  return toStructural(json);
}

/** The CustomResourceDefinition of one declaration: one served and stored version with a status subresource. */
export function crdOf(resource: ResourceDeclaration): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${resource.plural}.${resource.group}`, labels: { ...resource.labels } },
    spec: {
      group: resource.group,
      scope: 'Namespaced',
      names: {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular: resource.kind.toLowerCase(),
        shortNames: [...resource.shortNames],
        categories: [...resource.categories],
      },
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: resource.printerColumns.map((column) => ({ ...column })),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: resource.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApiSchemaOf(resource.spec),
                status: openApiSchemaOf(resource.status),
              },
            },
          },
        },
      ],
    },
  };
}

/** The file name of a CRD in crds/ and in the chart. */
export const crdFileName = (resource: ResourceDeclaration) => `${resource.group}_${resource.plural}.yaml`;

/** The YAML text of one CRD file, with a header that says where it comes from. */
export function renderCrd(resource: ResourceDeclaration): string {
  const header = [
    '# Generated from operator/src/api/v1alpha1.ts by `npm run gen:crds`; edit the declaration, not this file.',
  ];
  return `${header.join('\n')}\n${stringify(crdOf(resource), { lineWidth: 0 })}`;
}

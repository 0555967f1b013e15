/**
 * Offline stand-in for what the API server does with our CRDs on create and update: apply schema defaults,
 * validate the structural schema (ajv) and evaluate every `x-kubernetes-validations` CEL rule (cel-js) at its
 * path. Not reproduced: CEL cost limits and the type-check the API server runs when a CRD is registered
 * (../shared/reference/kubernetes.md §5.3), so every list and map CEL walks has maxItems / maxProperties.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type ParseResult, parse } from '@marcbachmann/cel-js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

/** An OpenAPI v3 schema node as a CRD holds it. */
export type SchemaNode = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
};

export interface CustomResourceDefinition {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: SchemaNode };
    }[];
  };
}

/** One reason an object was refused, as the API server lists it in `details.causes`. */
export interface FieldCause {
  readonly field: string;
  readonly message: string;
}

export type ValidationResult =
  | { ok: true; object: Record<string, unknown> }
  | { ok: false; causes: FieldCause[] };

export interface CrdValidator {
  readonly crd: CustomResourceDefinition;
  /** Defaults then validates a copy of `object`; `old` is the stored object on update (for transition rules). */
  validate(object: unknown, old?: unknown): ValidationResult;
}

/** The folder of CRD YAML files shipped with the repository. */
export const CRD_DIR = path.resolve(import.meta.dirname, '../../../crds');

export function loadCrds(dir = CRD_DIR): CustomResourceDefinition[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => parseYaml(readFileSync(path.join(dir, file), 'utf8')) as CustomResourceDefinition);
}

/** What ajv should see: int-or-string as anyOf, Kubernetes-only keywords left for the CEL walk. */
function toAjvSchema(node: SchemaNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, SchemaNode>).map(([k, v]) => [k, toAjvSchema(v)]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
      out[key] = toAjvSchema(value as SchemaNode);
    } else out[key] = value;
  }
  if (node['x-kubernetes-int-or-string']) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  // An object without listed properties that does not keep unknown fields is pruned by the API server; the
  // stand-in keeps them instead, which only matters for `metadata`.
  return out;
}

/**
 * The rules a structural schema must follow (API server: "structural schema"): every node says its type (or is
 * int-or-string / keeps unknown fields), and a node never lists both properties and additionalProperties.
 */
export function lintStructural(node: SchemaNode, at = ''): string[] {
  const problems: string[] = [];
  const typed =
    typeof node.type === 'string' ||
    node['x-kubernetes-int-or-string'] === true ||
    node['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed) problems.push(`${at || '<root>'}: no type`);
  if (node.properties && node.additionalProperties !== undefined)
    problems.push(`${at}: both properties and additionalProperties`);
  if (node.type === 'array' && !node.items) problems.push(`${at}: array without items`);
  for (const [key, child] of Object.entries(node.properties ?? {}))
    problems.push(...lintStructural(child, at ? `${at}.${key}` : key));
  if (node.items) problems.push(...lintStructural(node.items, `${at}[*]`));
  if (node.additionalProperties && typeof node.additionalProperties === 'object')
    problems.push(...lintStructural(node.additionalProperties, `${at}[*]`));
  for (const rule of node['x-kubernetes-validations'] ?? [])
    if (!rule.rule) problems.push(`${at}: a validation without a rule`);
  return problems;
}

/** CEL sees integers as int (BigInt in cel-js) only when the schema says so; JSON numbers would be doubles. */
function toCelValue(value: unknown, node: SchemaNode | undefined): unknown {
  if (value === null || value === undefined || !node) return value;
  if (typeof value === 'number' && Number.isInteger(value)) {
    if (node.type === 'integer' || node['x-kubernetes-int-or-string']) return BigInt(value);
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => toCelValue(item, node.items));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const child =
        node.properties?.[key] ??
        (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      out[key] = toCelValue(inner, child);
    }
    return out;
  }
  return value;
}

/** Rules are parsed once: the stand-in API server validates every write with them. */
const programs = new Map<string, ParseResult>();
function evaluate(rule: string, context: Record<string, unknown>): unknown {
  let program = programs.get(rule);
  if (!program) {
    program = parse(rule);
    programs.set(rule, program);
  }
  return program(context);
}

function celCauses(node: SchemaNode, value: unknown, old: unknown, at: string): FieldCause[] {
  if (value === undefined) return [];
  const causes: FieldCause[] = [];
  for (const rule of node['x-kubernetes-validations'] ?? []) {
    const usesOld = /\boldSelf\b/.test(rule.rule);
    if (usesOld && old === undefined) continue; // transition rules only run on update
    let passed: unknown;
    try {
      passed = evaluate(rule.rule, {
        self: toCelValue(value, node),
        ...(usesOld ? { oldSelf: toCelValue(old, node) } : {}),
      });
    } catch (error) {
      passed = false;
      causes.push({ field: at, message: `rule ${rule.rule} failed: ${(error as Error).message}` });
      continue;
    }
    if (passed !== true) causes.push({ field: at, message: rule.message ?? `failed rule: ${rule.rule}` });
  }
  if (node.properties && value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const oldRecord = (old && typeof old === 'object' ? old : {}) as Record<string, unknown>;
    for (const [key, child] of Object.entries(node.properties))
      causes.push(...celCauses(child, record[key], oldRecord[key], at ? `${at}.${key}` : key));
  }
  if (node.items && Array.isArray(value))
    value.forEach((item, i) => {
      causes.push(...celCauses(node.items as SchemaNode, item, undefined, `${at}[${i}]`));
    });
  if (
    typeof node.additionalProperties === 'object' &&
    value &&
    typeof value === 'object' &&
    !Array.isArray(value)
  )
    for (const [key, inner] of Object.entries(value as Record<string, unknown>))
      causes.push(...celCauses(node.additionalProperties, inner, undefined, `${at}[${key}]`));
  return causes;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true });
  addFormats(ajv);
  ajv.addFormat('int32', true);
  ajv.addFormat('int64', true);
  return ajv;
}

/** A validator for the storage version of one CRD. */
export function createCrdValidator(crd: CustomResourceDefinition): CrdValidator {
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  if (!version) throw new Error(`${crd.metadata.name} has no version`);
  const root = version.schema.openAPIV3Schema;
  const check: ValidateFunction = newAjv().compile(toAjvSchema(root));
  return {
    crd,
    validate(object, old) {
      const copy = structuredClone(object) as Record<string, unknown>;
      const causes: FieldCause[] = [];
      if (!check(copy))
        for (const error of check.errors ?? []) {
          const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
          const missing =
            error.keyword === 'required' ? (error.params as { missingProperty: string }) : undefined;
          causes.push({
            field: missing ? [field, missing.missingProperty].filter(Boolean).join('.') : field,
            message: missing ? 'Required value' : (error.message ?? 'invalid'),
          });
        }
      // CEL runs on defaulted objects, as in the API server; only when the schema passed (it assumes types).
      if (causes.length === 0) causes.push(...celCauses(root, copy, old, ''));
      return causes.length === 0 ? { ok: true, object: copy } : { ok: false, causes };
    },
  };
}

/** Validators for every CRD in `dir`, by plural. */
export function createCrdValidators(dir = CRD_DIR): Map<string, CrdValidator> {
  return new Map(loadCrds(dir).map((crd) => [crd.spec.names.plural, createCrdValidator(crd)]));
}

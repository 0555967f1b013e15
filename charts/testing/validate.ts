/**
 * Offline schema validation of rendered manifests (a kubeconform of our own): Kubernetes kinds against the
 * OpenAPI-derived models of `kubernetes-models`, KEDA, prometheus-operator and Gateway API kinds against their
 * published CRD schemas (`@kubernetes-models/*`). A kind with no known schema is an error, so nothing slips by.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

interface ModelClass {
  new (data: unknown): { validate(): void };
}

/** Where each API group's models live. */
const PACKAGES: Readonly<Record<string, string>> = {
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api',
};

/** Every object of a multi-document YAML stream (empty documents skipped). */
export function parseManifests(text: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`invalid YAML: ${document.errors[0]?.message}`);
    const value = document.toJS() as Manifest | null;
    if (value !== null) manifests.push(value);
  }
  return manifests;
}

async function modelOf(apiVersion: string, kind: string): Promise<ModelClass> {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const base = PACKAGES[group as string] ?? 'kubernetes-models';
  const module = group ? `${base}/${group}/${version}/${kind}` : `${base}/${version}/${kind}`;
  let exports: Record<string, unknown>;
  try {
    exports = (await import(module)) as Record<string, unknown>;
  } catch {
    throw new Error(`no schema known for ${apiVersion} ${kind} (looked for ${module})`);
  }
  const model = exports[kind];
  if (typeof model !== 'function') throw new Error(`${module} has no ${kind} model`);
  return model as ModelClass;
}

/** The schema errors of one object, or an empty list. */
export async function schemaErrors(manifest: Manifest): Promise<string[]> {
  const where = `${manifest.kind}/${manifest.metadata?.name}`;
  try {
    const Model = await modelOf(manifest.apiVersion, manifest.kind);
    new Model(manifest).validate();
    return [];
  } catch (error) {
    return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * Fields no schema knows (a typo in a template: `readinessprobe`, `tolerations` in the wrong place). The models'
 * validators ignore unknown fields, so each object is type-checked as an object literal of its model's TypeScript
 * interface, which refuses excess properties at any depth (kubeconform's strict mode, by the TypeScript compiler).
 */
export function unknownFieldErrors(manifests: readonly Manifest[]): string[] {
  const lines: string[] = [];
  const names: string[] = [];
  manifests.forEach((manifest, index) => {
    const [group, version] = manifest.apiVersion.includes('/')
      ? manifest.apiVersion.split('/')
      : ['', manifest.apiVersion];
    const base = PACKAGES[group as string] ?? 'kubernetes-models';
    const module = group
      ? `${base}/${group}/${version}/${manifest.kind}`
      : `${base}/${version}/${manifest.kind}`;
    lines.push(`import type { I${manifest.kind} as T${index} } from '${module}';`);
    lines.push(`export const o${index}: T${index} = ${JSON.stringify(manifest)};`);
    names.push(`${manifest.kind}/${manifest.metadata.name}`);
  });
  const file = join(import.meta.dirname, '__rendered__.ts');
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const source = program.getSourceFile(file) as ts.SourceFile;
  return ts.getPreEmitDiagnostics(program, source).map((diagnostic) => {
    const line =
      diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    return `${names[Math.floor(line / 2)] ?? '?'}: ${message}`;
  });
}

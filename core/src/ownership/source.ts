import { AppError } from '../errors.ts';

/** The custom resource kinds of `turnpike.dev` that own database rows. */
export const SourceKind = {
  Channel: 'Channel',
  ModelPrice: 'ModelPrice',
  GatewayOption: 'GatewayOption',
} as const;
export type SourceKindValue = (typeof SourceKind)[keyof typeof SourceKind];

/** A custom resource, without its generation: what the operator looks rows up by. */
export interface SourceRef {
  readonly kind: SourceKindValue;
  readonly namespace: string;
  readonly name: string;
}

/** The resource that wrote a row and the generation of its spec that row reflects. */
export interface ResourceSource extends SourceRef {
  readonly generation: number;
}

/** `Channel team-a/openai`: how people (and kubectl) name a resource. */
export function describeSource(source: SourceRef): string {
  return `${source.kind} ${source.namespace}/${source.name}`;
}

/** The source columns of a row, or undefined when a person owns it. */
export function sourceOfRow(row: {
  sourceKind: string | null;
  sourceNamespace: string | null;
  sourceName: string | null;
  sourceGeneration: number | null;
}): ResourceSource | undefined {
  if (!row.sourceKind || row.sourceNamespace === null || row.sourceName === null) return undefined;
  return {
    kind: row.sourceKind as SourceKindValue,
    namespace: row.sourceNamespace,
    name: row.sourceName,
    generation: row.sourceGeneration ?? 0,
  };
}

/** The refusal the console API answers when someone edits what Git owns. */
export function managedByKubernetes(what: string, source: SourceRef): AppError {
  return new AppError(
    'MANAGED_BY_KUBERNETES',
    `${what} is managed by Kubernetes (${describeSource(source)}); change it there with kubectl or in Git`,
  );
}

/** RFC 7386 JSON merge patch and RFC 6902 JSON patch, as the API server applies them to custom resources. */

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'test' | 'move' | 'copy';
  path: string;
  value?: unknown;
  from?: string;
}

export class JsonPatchError extends Error {
  /** `test` failed (the API server answers 422), as opposed to a path that does not exist. */
  readonly testFailed: boolean;
  constructor(message: string, testFailed = false) {
    super(message);
    this.testFailed = testFailed;
  }
}

const unescapeToken = (token: string) => token.replaceAll('~1', '/').replaceAll('~0', '~');

function parent(
  doc: unknown,
  pointer: string,
): { container: Record<string, unknown> | unknown[]; key: string } {
  const tokens = pointer.split('/').slice(1).map(unescapeToken);
  const key = tokens.pop();
  if (key === undefined) throw new JsonPatchError('the root cannot be patched');
  let node = doc;
  for (const token of tokens) {
    if (node === null || typeof node !== 'object') throw new JsonPatchError(`path ${pointer} does not exist`);
    node = (node as Record<string, unknown>)[token];
  }
  if (node === null || typeof node !== 'object') throw new JsonPatchError(`path ${pointer} does not exist`);
  return { container: node as Record<string, unknown> | unknown[], key };
}

function get(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  const { container, key } = parent(doc, pointer);
  return Array.isArray(container) ? container[Number(key)] : container[key];
}

export function jsonPatch(target: unknown, operations: JsonPatchOperation[]): unknown {
  const doc = structuredClone(target);
  for (const operation of operations) {
    const { op, path } = operation;
    if (op === 'test') {
      if (JSON.stringify(get(doc, path)) !== JSON.stringify(operation.value))
        throw new JsonPatchError(`test of ${path} failed`, true);
      continue;
    }
    const value =
      op === 'move' || op === 'copy'
        ? structuredClone(get(doc, operation.from ?? ''))
        : structuredClone(operation.value);
    if (op === 'move') {
      const from = parent(doc, operation.from ?? '');
      if (Array.isArray(from.container)) from.container.splice(Number(from.key), 1);
      else delete from.container[from.key];
    }
    const { container, key } = parent(doc, path);
    if (Array.isArray(container)) {
      const index = key === '-' ? container.length : Number(key);
      if (op === 'remove' || op === 'replace') {
        if (index >= container.length) throw new JsonPatchError(`path ${path} does not exist`);
        if (op === 'remove') container.splice(index, 1);
        else container[index] = value;
      } else container.splice(index, 0, value);
    } else {
      if ((op === 'remove' || op === 'replace') && !(key in container))
        throw new JsonPatchError(`path ${path} does not exist`);
      if (op === 'remove') delete container[key];
      else container[key] = value;
    }
  }
  return doc;
}

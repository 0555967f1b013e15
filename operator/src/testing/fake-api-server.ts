/**
 * An in-process, protocol-faithful stand-in for the Kubernetes API server, for the operator's integration
 * tests (../shared/reference/kubernetes.md §5.2). It serves our three custom resources (validated and defaulted
 * by the real CRDs through the ajv + CEL validator), Secrets, Leases and Events over plain HTTP on loopback:
 * list and watch with one global resourceVersion and an event log (410 Gone once compacted), the status
 * subresource, generation, finalizers and deletionTimestamp, merge and JSON patch (`test` included), optimistic
 * concurrency (409 Conflict), Status error bodies, and hooks to break things (compaction, dropped watches,
 * injected failures and hangs).
 *
 * Limitations (documented, not needed by the operator): no server-side apply, field selectors, pagination,
 * bookmarks, managedFields or pruning of unknown fields; label selectors are equality-based only.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CrdValidator, createCrdValidators } from '../crd/validate.ts';
import { JsonPatchError, type JsonPatchOperation, jsonPatch, mergePatch } from './patch.ts';

type Obj = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
  status?: unknown;
};
interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
  labels?: Record<string, string>;
  [key: string]: unknown;
}

interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** Status subresource: the main resource ignores `status`, `/status` ignores everything else. */
  readonly statusSubresource: boolean;
  /** Custom resources count generations. */
  readonly generation: boolean;
  readonly validator?: CrdValidator;
}

interface WatchEvent {
  readonly rv: number;
  readonly typeKey: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Obj;
}

interface Watcher {
  readonly typeKey: string;
  readonly namespace: string | undefined;
  readonly selector: Record<string, string>;
  readonly res: ServerResponse;
}

/** A request the stand-in received, for assertions. */
export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly contentType: string | undefined;
  readonly body: unknown;
}

/** A failure to inject: requests matching `method`/`path` get `status` (a Status body), or hang, `times` times. */
export interface Fault {
  readonly method?: string;
  /** Substring of the path (query excluded). */
  readonly path?: string;
  /** Only watch requests (or only non-watch with false). */
  readonly watch?: boolean;
  readonly status: number | 'hang';
  times: number;
}

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: LoggedRequest[];
  /** Current global resourceVersion. */
  resourceVersion(): number;
  /** Forgets the event log: any watch resuming from an older resourceVersion gets 410 Gone. */
  compact(): void;
  /** Ends every open watch stream (clients must re-watch from their last resourceVersion). */
  dropWatches(): void;
  openWatches(): number;
  inject(fault: Fault): void;
  /** Direct access to stored objects, bypassing HTTP (like `kubectl` would see them). */
  get(path: ObjectPath): Obj | undefined;
  list(type: TypePath, namespace?: string): Obj[];
  /** kubectl-like writes through the same code paths as HTTP (validation, generation, events). */
  apply(object: Obj): Obj;
  remove(path: ObjectPath): void;
  events(namespace?: string): Obj[];
  close(): Promise<void>;
}

export interface TypePath {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}
export interface ObjectPath extends TypePath {
  readonly namespace: string;
  readonly name: string;
}

class HttpError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details?: unknown;
  constructor(code: number, reason: string, message: string, details?: unknown) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const typeKeyOf = (t: TypePath) => `${t.group}/${t.version}/${t.plural}`;
const objectKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;
const withoutMetaAndStatus = (o: Obj) => {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return JSON.stringify(rest);
};

const BUILT_IN: ResourceType[] = [
  {
    group: '',
    version: 'v1',
    plural: 'secrets',
    kind: 'Secret',
    statusSubresource: false,
    generation: false,
  },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', statusSubresource: false, generation: false },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    statusSubresource: false,
    generation: false,
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    statusSubresource: false,
    generation: false,
  },
];

/** How many events the log keeps before it forgets the oldest (a watch behind them gets 410). */
const LOG_LIMIT = 50_000;

export async function startFakeApiServer(options: { logLimit?: number } = {}): Promise<FakeApiServer> {
  const types = new Map<string, ResourceType>();
  for (const t of BUILT_IN) types.set(typeKeyOf(t), t);
  for (const [plural, validator] of createCrdValidators()) {
    const crd = validator.crd;
    const version = crd.spec.versions.find((v) => v.storage)!;
    types.set(typeKeyOf({ group: crd.spec.group, version: version.name, plural }), {
      group: crd.spec.group,
      version: version.name,
      plural,
      kind: crd.spec.names.kind,
      statusSubresource: Boolean(version.subresources?.status),
      generation: true,
      validator,
    });
  }
  const store = new Map<string, Map<string, Obj>>();
  const log: WatchEvent[] = [];
  let logStart = 1; // the oldest rv still in the log (everything after logStart - 1 can be replayed)
  let rv = 0;
  const watchers = new Set<Watcher>();
  const faults: Fault[] = [];
  const requests: LoggedRequest[] = [];
  const logLimit = options.logLimit ?? LOG_LIMIT;

  const bucket = (typeKey: string) => {
    let b = store.get(typeKey);
    if (!b) {
      b = new Map();
      store.set(typeKey, b);
    }
    return b;
  };

  const apiVersionOf = (t: ResourceType) => (t.group ? `${t.group}/${t.version}` : t.version);

  function matches(selector: Record<string, string>, o: Obj): boolean {
    return Object.entries(selector).every(([k, v]) => o.metadata.labels?.[k] === v);
  }

  function emit(t: ResourceType, type: WatchEvent['type'], object: Obj): void {
    const event: WatchEvent = { rv, typeKey: typeKeyOf(t), type, object: structuredClone(object) };
    log.push(event);
    if (log.length > logLimit) {
      const dropped = log.splice(0, log.length - logLimit);
      logStart = (dropped.at(-1)?.rv ?? logStart - 1) + 1;
    }
    for (const w of watchers) send(w, event);
  }

  function send(w: Watcher, event: WatchEvent): void {
    if (w.typeKey !== event.typeKey) return;
    if (w.namespace !== undefined && event.object.metadata.namespace !== w.namespace) return;
    if (!matches(w.selector, event.object)) return;
    w.res.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
  }

  function bump(o: Obj): void {
    rv += 1;
    o.metadata.resourceVersion = String(rv);
  }

  function validate(t: ResourceType, o: Obj, old: Obj | undefined): Obj {
    if (!t.validator) return o;
    const result = t.validator.validate(o, old);
    if (result.ok) return result.object as Obj;
    const message = `${t.kind}.${t.group} "${o.metadata.name}" is invalid: ${result.causes
      .map((c) => `${c.field}: ${c.message}`)
      .join(', ')}`;
    throw new HttpError(422, 'Invalid', message, {
      name: o.metadata.name,
      group: t.group,
      kind: t.kind,
      causes: result.causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
    });
  }

  function create(t: ResourceType, namespace: string | undefined, body: Obj): Obj {
    if (body?.metadata && !body.metadata.name && typeof body.metadata.generateName === 'string')
      body.metadata.name = `${body.metadata.generateName}${randomUUID().slice(0, 8)}`;
    if (!body?.metadata?.name) throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    const b = bucket(typeKeyOf(t));
    const key = objectKey(namespace, body.metadata.name);
    if (b.has(key))
      throw new HttpError(409, 'AlreadyExists', `${t.plural} "${body.metadata.name}" already exists`, {
        name: body.metadata.name,
        kind: t.plural,
      });
    let o: Obj = structuredClone(body);
    o.apiVersion = apiVersionOf(t);
    o.kind = t.kind;
    if (t.statusSubresource) delete o.status;
    o.metadata = {
      ...o.metadata,
      namespace,
      uid: randomUUID(),
      creationTimestamp: now(),
      ...(t.generation ? { generation: 1 } : {}),
    };
    delete o.metadata.deletionTimestamp;
    if (t.plural === 'secrets' && o.stringData) {
      const data = { ...((o.data as Record<string, string>) ?? {}) };
      for (const [k, v] of Object.entries(o.stringData as Record<string, string>))
        data[k] = Buffer.from(v).toString('base64');
      o.data = data;
      delete o.stringData;
    }
    o = validate(t, o, undefined);
    bump(o);
    b.set(key, o);
    emit(t, 'ADDED', o);
    return o;
  }

  function mustGet(t: ResourceType, namespace: string | undefined, name: string): Obj {
    const o = bucket(typeKeyOf(t)).get(objectKey(namespace, name));
    if (!o)
      throw new HttpError(404, 'NotFound', `${t.plural}.${t.group} "${name}" not found`, {
        name,
        kind: t.plural,
      });
    return o;
  }

  /** Stores `next` as the new state of an existing object, with the API server's rules. */
  function update(t: ResourceType, current: Obj, incoming: Obj, subresource: 'main' | 'status'): Obj {
    const wanted = incoming.metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== current.metadata.resourceVersion)
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${t.plural}.${t.group} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name: current.metadata.name, kind: t.plural },
      );
    let next: Obj;
    if (subresource === 'status')
      next = { ...structuredClone(current), status: structuredClone(incoming.status) };
    else {
      next = structuredClone(incoming);
      if (t.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = structuredClone(current.status);
      }
      // Fields the server owns.
      next.metadata = {
        ...next.metadata,
        name: current.metadata.name,
        namespace: current.metadata.namespace,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        generation: current.metadata.generation,
        deletionTimestamp: current.metadata.deletionTimestamp,
        deletionGracePeriodSeconds: current.metadata.deletionGracePeriodSeconds,
      };
      if (!next.metadata.deletionTimestamp) {
        delete next.metadata.deletionTimestamp;
        delete next.metadata.deletionGracePeriodSeconds;
      }
    }
    next.apiVersion = apiVersionOf(t);
    next.kind = t.kind;
    if (current.metadata.deletionTimestamp) {
      const before = new Set(current.metadata.finalizers ?? []);
      const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length > 0)
        throw new HttpError(
          422,
          'Invalid',
          `${t.kind} "${current.metadata.name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        );
    }
    if (subresource === 'main') next = validate(t, next, current);
    if (
      t.generation &&
      subresource === 'main' &&
      withoutMetaAndStatus(next) !== withoutMetaAndStatus(current)
    )
      next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    if (
      JSON.stringify({ ...next, metadata: { ...next.metadata, resourceVersion: '' } }) ===
      JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: '' } })
    )
      return current; // a no-op write changes no resourceVersion and wakes no watcher
    const b = bucket(typeKeyOf(t));
    bump(next);
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      b.delete(objectKey(next.metadata.namespace, next.metadata.name));
      emit(t, 'DELETED', next);
      return next;
    }
    b.set(objectKey(next.metadata.namespace, next.metadata.name), next);
    emit(t, 'MODIFIED', next);
    return next;
  }

  function remove(t: ResourceType, namespace: string | undefined, name: string): Obj {
    const current = mustGet(t, namespace, name);
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp) return current;
      const next = structuredClone(current);
      next.metadata.deletionTimestamp = now();
      next.metadata.deletionGracePeriodSeconds = 0;
      bump(next);
      bucket(typeKeyOf(t)).set(objectKey(namespace, name), next);
      emit(t, 'MODIFIED', next);
      return next;
    }
    const gone = structuredClone(current);
    bump(gone);
    bucket(typeKeyOf(t)).delete(objectKey(namespace, name));
    emit(t, 'DELETED', gone);
    return gone;
  }

  function listObjects(
    t: ResourceType,
    namespace: string | undefined,
    selector: Record<string, string>,
  ): Obj[] {
    return [...bucket(typeKeyOf(t)).values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .filter((o) => matches(selector, o))
      .map((o) => [objectKey(o.metadata.namespace, o.metadata.name), o] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o);
  }

  function parseSelector(text: string | undefined): Record<string, string> {
    if (!text) return {};
    const out: Record<string, string> = {};
    for (const part of text.split(',')) {
      const [k, v] = part.split(/==?/);
      if (k) out[k.trim()] = (v ?? '').trim();
    }
    return out;
  }

  /** `/api/v1/...` or `/apis/{g}/{v}/...` into the parts. */
  function route(pathname: string) {
    const parts = pathname.split('/').filter(Boolean);
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api') {
      group = '';
      version = parts[1] ?? '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis') {
      group = parts[1] ?? '';
      version = parts[2] ?? '';
      rest = parts.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, sub] = rest;
    return { group, version, namespace, plural, name, sub };
  }

  function sendStatus(res: ServerResponse, error: HttpError): void {
    res.writeHead(error.code, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: error.message,
        reason: error.reason,
        ...(error.details ? { details: error.details } : {}),
        code: error.code,
      }),
    );
  }

  function sendJson(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (chunks.length === 0) return undefined;
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return JSON.parse(text);
    } catch {
      throw new HttpError(400, 'BadRequest', 'the body is not JSON');
    }
  }

  function startWatch(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    namespace: string | undefined,
    selector: Record<string, string>,
    fromText: string | undefined,
  ): void {
    const typeKey = typeKeyOf(t);
    const from = fromText === undefined || fromText === '' || fromText === '0' ? undefined : Number(fromText);
    if (from !== undefined && from + 1 < logStart) {
      sendStatus(res, new HttpError(410, 'Expired', `too old resource version: ${from} (${logStart - 1})`));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const watcher: Watcher = { typeKey, namespace, selector, res };
    if (from === undefined) {
      for (const o of listObjects(t, namespace, selector))
        res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
    } else for (const event of log) if (event.rv > from) send(watcher, event);
    watchers.add(watcher);
    const drop = () => watchers.delete(watcher);
    req.on('close', drop);
    res.on('close', drop);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    const isWatch = query.watch === 'true' || query.watch === '1';
    const body = method === 'GET' || method === 'DELETE' ? undefined : await readBody(req);
    requests.push({ method, path: url.pathname, query, contentType: req.headers['content-type'], body });

    const fault = faults.find(
      (f) =>
        f.times > 0 &&
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || url.pathname.includes(f.path)) &&
        (f.watch === undefined || f.watch === isWatch),
    );
    if (fault) {
      fault.times -= 1;
      if (fault.status === 'hang') return; // never answered: the client's timeout must act
      throw new HttpError(
        fault.status,
        fault.status >= 500 ? 'InternalError' : 'BadRequest',
        'injected fault',
      );
    }

    const r = route(url.pathname);
    if (!r) throw new HttpError(404, 'NotFound', `no route for ${url.pathname}`);
    if (!r.plural) {
      // discovery: GET /apis/{g}/{v}
      const resources = [...types.values()]
        .filter((t) => t.group === r.group && t.version === r.version)
        .map((t) => ({
          name: t.plural,
          namespaced: true,
          kind: t.kind,
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        }));
      if (resources.length === 0) throw new HttpError(404, 'NotFound', 'no such group/version');
      sendJson(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: r.group ? `${r.group}/${r.version}` : r.version,
        resources,
      });
      return;
    }
    const t = types.get(typeKeyOf({ group: r.group, version: r.version, plural: r.plural }));
    if (!t)
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${r.plural})`);
    const selector = parseSelector(query.labelSelector);

    if (!r.name) {
      if (method === 'GET' && isWatch)
        return startWatch(req, res, t, r.namespace, selector, query.resourceVersion);
      if (method === 'GET') {
        sendJson(res, 200, {
          apiVersion: apiVersionOf(t),
          kind: `${t.kind}List`,
          metadata: { resourceVersion: String(rv) },
          items: listObjects(t, r.namespace, selector),
        });
        return;
      }
      if (method === 'POST') {
        if (r.namespace === undefined)
          throw new HttpError(405, 'MethodNotAllowed', 'create needs a namespace');
        sendJson(res, 201, create(t, r.namespace, body as Obj));
        return;
      }
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on a collection`);
    }

    const sub = r.sub === 'status' ? 'status' : 'main';
    if (r.sub !== undefined && r.sub !== 'status')
      throw new HttpError(404, 'NotFound', `no subresource ${r.sub}`);
    if (sub === 'status' && !t.statusSubresource)
      throw new HttpError(404, 'NotFound', 'no status subresource');
    switch (method) {
      case 'GET':
        sendJson(res, 200, mustGet(t, r.namespace, r.name));
        return;
      case 'PUT': {
        const current = mustGet(t, r.namespace, r.name);
        sendJson(res, 200, update(t, current, body as Obj, sub));
        return;
      }
      case 'PATCH': {
        const current = mustGet(t, r.namespace, r.name);
        const type = String(req.headers['content-type'] ?? '').split(';')[0];
        let next: Obj;
        if (type === 'application/merge-patch+json') {
          next = mergePatch(current, body) as Obj;
          // A resourceVersion in a merge patch is a precondition (kept as sent; update() compares it).
          if ((body as Obj)?.metadata?.resourceVersion === undefined)
            next.metadata.resourceVersion = undefined;
        } else if (type === 'application/json-patch+json') {
          try {
            next = jsonPatch(current, body as JsonPatchOperation[]) as Obj;
          } catch (error) {
            if (error instanceof JsonPatchError)
              throw new HttpError(error.testFailed ? 422 : 422, 'Invalid', error.message);
            throw error;
          }
          if (next.metadata.resourceVersion === current.metadata.resourceVersion)
            next.metadata.resourceVersion = undefined;
        } else if (type === 'application/apply-patch+yaml') {
          // Documented limitation: server-side apply as a deep merge, no field ownership or removal.
          next = mergePatch(current, body) as Obj;
          next.metadata.resourceVersion = undefined;
        } else
          throw new HttpError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format: ${type}`,
          );
        sendJson(res, 200, update(t, current, next, sub));
        return;
      }
      case 'DELETE':
        sendJson(res, 200, remove(t, r.namespace, r.name));
        return;
      default:
        throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed`);
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (error instanceof HttpError) sendStatus(res, error);
      else sendStatus(res, new HttpError(500, 'InternalError', (error as Error).message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const typeOf = (p: TypePath) => {
    const t = types.get(typeKeyOf(p));
    if (!t) throw new Error(`unknown type ${typeKeyOf(p)}`);
    return t;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    resourceVersion: () => rv,
    compact() {
      log.length = 0;
      logStart = rv + 1;
    },
    dropWatches() {
      for (const w of watchers) w.res.end();
      watchers.clear();
    },
    openWatches: () => watchers.size,
    inject(fault) {
      faults.push(fault);
    },
    get(p) {
      return bucket(typeKeyOf(p)).get(objectKey(p.namespace, p.name));
    },
    list(p, namespace) {
      return listObjects(typeOf(p), namespace, {});
    },
    apply(object) {
      const [group, version] = object.apiVersion?.includes('/')
        ? object.apiVersion.split('/')
        : ['', object.apiVersion ?? 'v1'];
      const t = [...types.values()].find(
        (x) => x.group === group && x.version === version && x.kind === object.kind,
      );
      if (!t) throw new Error(`unknown kind ${object.kind}`);
      const namespace = object.metadata.namespace ?? 'default';
      const current = bucket(typeKeyOf(t)).get(objectKey(namespace, object.metadata.name));
      try {
        if (!current) return create(t, namespace, object);
        const merged: Obj = {
          ...structuredClone(object),
          metadata: { ...current.metadata, ...object.metadata, resourceVersion: undefined },
        };
        if (t.plural === 'secrets' && merged.stringData) {
          merged.data = Object.fromEntries(
            Object.entries(merged.stringData as Record<string, string>).map(([k, v]) => [
              k,
              Buffer.from(v).toString('base64'),
            ]),
          );
          delete merged.stringData;
        }
        return update(t, current, merged as Obj, 'main');
      } catch (error) {
        if (error instanceof HttpError) throw new Error(`${error.code} ${error.reason}: ${error.message}`);
        throw error;
      }
    },
    remove(p) {
      remove(typeOf(p), p.namespace, p.name);
    },
    events(namespace) {
      return [
        ...listObjects(typeOf({ group: 'events.k8s.io', version: 'v1', plural: 'events' }), namespace, {}),
        ...listObjects(typeOf({ group: '', version: 'v1', plural: 'events' }), namespace, {}),
      ];
    },
    async close() {
      for (const w of watchers) w.res.destroy();
      watchers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

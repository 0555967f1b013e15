/**
 * The narrow view of the Kubernetes API the operator needs, on top of `@kubernetes/client-node` (typed
 * CustomObjectsApi / CoreV1Api / CoordinationV1Api / EventsV1Api calls, and its Watch for streams). Everything
 * else in the operator takes this interface, so tests can count calls or break them.
 */
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { GROUP, type SecretObject, VERSION } from '../api/v1alpha1.ts';

export interface KubeList<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** A failed call with the HTTP status and the Status reason (`NotFound`, `Conflict`, `Expired`, ...). */
export class KubeError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.name = 'KubeError';
    this.code = code;
    this.reason = reason;
  }
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface LeaseObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

export interface EventInput {
  readonly namespace: string;
  readonly regarding: {
    kind: string;
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
  };
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  readonly action: string;
}

export interface KubeClient {
  /** Custom resources of `turnpike.dev/v1alpha1`, in one namespace or all. */
  list(plural: string, namespace: string | undefined): Promise<KubeList<unknown>>;
  /** Secrets carrying `labelSelector`, in one namespace or all. */
  listSecrets(namespace: string | undefined, labelSelector: string): Promise<KubeList<SecretObject>>;
  /** The watch path of `list` / `listSecrets`. */
  watchPath(plural: string | 'secrets', namespace: string | undefined): string;
  /** Opens a watch stream; resolves with a function that ends it. `done` is called once when it ends. */
  watch(
    path: string,
    query: Record<string, string>,
    onEvent: (type: WatchEventType, object: unknown) => void,
    done: (error: unknown) => void,
  ): Promise<() => void>;
  get(plural: string, namespace: string, name: string): Promise<unknown | undefined>;
  /** RFC 6902 patch of the main resource (finalizers, guarded by a `test` of the resourceVersion). */
  jsonPatch(plural: string, namespace: string, name: string, operations: object[]): Promise<unknown>;
  /** Merge patch of the status subresource (the operator owns the whole status). */
  patchStatus(plural: string, namespace: string, name: string, status: object): Promise<unknown>;
  readLease(namespace: string, name: string): Promise<LeaseObject | undefined>;
  createLease(namespace: string, lease: LeaseObject): Promise<LeaseObject>;
  /** Replaces a Lease; 409 when its resourceVersion is stale (someone else renewed or took it). */
  replaceLease(namespace: string, lease: LeaseObject): Promise<LeaseObject>;
  createEvent(event: EventInput, reportingController: string, reportingInstance: string): Promise<void>;
}

/** Turns client-node's ApiException (body = raw Status JSON text) into a KubeError. */
export function toKubeError(error: unknown): unknown {
  if (error instanceof k8s.ApiException) {
    let reason = '';
    let message = error.message;
    try {
      const status = JSON.parse(String(error.body)) as { reason?: string; message?: string };
      reason = status.reason ?? '';
      message = status.message ?? message;
    } catch {}
    return new KubeError(error.code, reason, message);
  }
  return error;
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toKubeError(error);
  }
}

async function orUndefined<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call(run);
  } catch (error) {
    if (error instanceof KubeError && error.code === 404) return undefined;
    throw error;
  }
}

/** A KubeConfig for a plain-HTTP API server on loopback (the stand-in), with any token. */
export function kubeConfigFor(server: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server, skipTLSVerify: true }],
    users: [{ name: 'operator', token: 'test-token' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'operator' }],
    currentContext: 'local',
  });
  return kc;
}

/**
 * client-node 2.0 builds a new undici Agent for every request whenever TLS options are set (in a cluster the CA
 * always is), and each Agent keeps its socket alive: at a cold start of thousands of resources that is
 * thousands of open sockets and hundreds of MiB of RSS. One dispatcher per distinct TLS setup fixes it.
 */
function reuseDispatchers(kc: k8s.KubeConfig): void {
  const target = kc as unknown as {
    createDispatcher(cluster: unknown, options: Record<string, unknown>): unknown;
  };
  const build = target.createDispatcher.bind(target);
  const cache = new Map<string, unknown>();
  target.createDispatcher = (cluster, options) => {
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          cluster,
          Object.entries(options).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('base64') : v]),
        ]),
      )
      .digest('hex');
    if (!cache.has(key)) cache.set(key, build(cluster, options));
    return cache.get(key);
  };
}

export function createKubeClient(kc: k8s.KubeConfig): KubeClient {
  reuseDispatchers(kc);
  const co = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const events = kc.makeApiClient(k8s.EventsV1Api);
  const watcher = new k8s.Watch(kc);
  const base = { group: GROUP, version: VERSION };
  const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const jsonPatchHeader = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);

  const listOf = <T>(list: { items?: T[]; metadata?: { resourceVersion?: string } }): KubeList<T> => ({
    items: list.items ?? [],
    resourceVersion: list.metadata?.resourceVersion ?? '',
  });

  return {
    async list(plural, namespace) {
      const list = await call(() =>
        namespace
          ? co.listNamespacedCustomObject({ ...base, plural, namespace })
          : co.listCustomObjectForAllNamespaces({ ...base, resourcePlural: plural }),
      );
      return listOf(list as { items?: unknown[] });
    },

    async listSecrets(namespace, labelSelector) {
      const list = await call(() =>
        namespace
          ? core.listNamespacedSecret({ namespace, labelSelector })
          : core.listSecretForAllNamespaces({ labelSelector }),
      );
      return listOf(list as unknown as { items?: SecretObject[] });
    },

    watchPath(plural, namespace) {
      const ns = namespace ? `/namespaces/${namespace}` : '';
      return plural === 'secrets' ? `/api/v1${ns}/secrets` : `/apis/${GROUP}/${VERSION}${ns}/${plural}`;
    },

    async watch(path, query, onEvent, done) {
      let finished = false;
      const once = (error: unknown) => {
        if (finished) return;
        finished = true;
        done(error);
      };
      const controller = await watcher.watch(
        path,
        query,
        (type, object) => onEvent(type as WatchEventType, object),
        once,
      );
      return () => {
        finished = true;
        controller.abort();
      };
    },

    get: (plural, namespace, name) =>
      orUndefined(() => co.getNamespacedCustomObject({ ...base, plural, namespace, name })),

    jsonPatch: (plural, namespace, name, operations) =>
      call(() =>
        co.patchNamespacedCustomObject(
          { ...base, plural, namespace, name, body: operations },
          jsonPatchHeader,
        ),
      ),

    patchStatus: (plural, namespace, name, status) =>
      call(() =>
        co.patchNamespacedCustomObjectStatus({ ...base, plural, namespace, name, body: { status } }, merge),
      ),

    readLease: (namespace, name) =>
      orUndefined(() => coordination.readNamespacedLease({ namespace, name })) as Promise<
        LeaseObject | undefined
      >,

    createLease: (namespace, lease) =>
      call(() =>
        coordination.createNamespacedLease({ namespace, body: lease as k8s.V1Lease }),
      ) as Promise<LeaseObject>,

    replaceLease: (namespace, lease) =>
      call(() =>
        coordination.replaceNamespacedLease({
          namespace,
          name: lease.metadata.name,
          body: lease as k8s.V1Lease,
        }),
      ) as Promise<LeaseObject>,

    async createEvent(event, reportingController, reportingInstance) {
      await call(() =>
        events.createNamespacedEvent({
          namespace: event.namespace,
          body: {
            metadata: { generateName: `${event.regarding.name}.`, namespace: event.namespace },
            eventTime: new k8s.V1MicroTime(),
            regarding: { apiVersion: `${GROUP}/${VERSION}`, ...event.regarding },
            type: event.type,
            reason: event.reason,
            note: event.note,
            action: event.action,
            reportingController,
            reportingInstance,
          },
        }),
      );
    },
  };
}

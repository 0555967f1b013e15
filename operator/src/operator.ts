/**
 * The operator: leader election on a Lease; while leading, one informer per kind plus one for labelled
 * Secrets, a keyed work queue per kind, and the reconcilers. Only the leader writes (database and status);
 * a standby only renews its candidacy. Losing the lease stops the controllers and calls `onLostLeadership`
 * (the process exits there, as controller-runtime does, and the Deployment restarts it as a standby).
 */
import { hostname } from 'node:os';
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { createChannelWriter } from '@turnpike/core/channels/channel-writes';
import { deferEventsInTransaction, followAmbientTransaction } from '@turnpike/core/db/ambient';
import type { Db } from '@turnpike/core/db/client';
import type { EventBus } from '@turnpike/core/events/bus';
import { createManagedOptionWriter } from '@turnpike/core/options/managed-options';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  type AnyResource,
  type ChannelResource,
  CREDENTIAL_LABEL,
  type GatewayOptionResource,
  KINDS,
  type KindInfo,
  keyOf,
  type ModelPriceResource,
  type SecretObject,
} from './api/v1alpha1.ts';
import { auditChannelWrites, auditOptionWrites } from './controllers/audit.ts';
import { channelHandlers, secretKeyOf } from './controllers/channel/reconcile.ts';
import { type Controller, createController, type KindHandlers } from './controllers/controller.ts';
import { gatewayOptionHandlers } from './controllers/gateway-option/reconcile.ts';
import { modelPriceHandlers } from './controllers/model-price/reconcile.ts';
import { createOptionBatcher } from './controllers/option-batcher.ts';
import type { KubeClient } from './kube/client.ts';
import { findCondition } from './runtime/conditions.ts';
import { createEventRecorder } from './runtime/events.ts';
import { type HealthServer, startHealthServer } from './runtime/health.ts';
import { createInformer, type Informer } from './runtime/informer.ts';
import { createLeaderElector } from './runtime/leader.ts';
import { createOperatorMetrics, type OperatorMetrics } from './runtime/metrics.ts';
import { countApplied, type RelayPresence, readRelayPresence } from './runtime/presence.ts';
import { createWorkQueue, type WorkQueue } from './runtime/work-queue.ts';

export interface OperatorDeps {
  readonly db: Db;
  readonly bus: EventBus;
  /** Present with REDIS_URL: relay presence for `status.relays`. */
  readonly redis?: Redis | undefined;
  readonly redisKeyPrefix: string;
  readonly cryptoSecret: string;
  readonly kube: KubeClient;
  readonly logger: Logger;
}

export interface OperatorOptions {
  /** HTTP port of /healthz, /readyz, /metrics; undefined: no HTTP server (tests that do not need it). */
  readonly port?: number;
  readonly host?: string;
  readonly identity?: string;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /** undefined: every namespace. */
  readonly watchNamespace?: string | undefined;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** Workers per kind; ModelPrice and GatewayOption reconciles mostly wait for a shared batched write, so more of them only make bigger batches. */
  readonly concurrency?: { channel?: number; option?: number };
  /** Every resource is reconciled again this often (level-triggered safety net). */
  readonly resyncMs?: number;
  readonly informerBackoffMs?: { min: number; max: number };
  readonly onLostLeadership?: () => void;
}

export interface Operator {
  readonly metrics: OperatorMetrics;
  readonly identity: string;
  /** Bound HTTP port (when `port` was given). */
  readonly port: number | undefined;
  start(): Promise<void>;
  /** Stops everything; `releaseLease: false` leaves the Lease to expire, as a crashed process would. */
  stop(options?: { releaseLease?: boolean }): Promise<void>;
  isLeader(): boolean;
  /** Leader with every informer synced and nothing waiting in the queues. */
  idle(): boolean;
}

const PRESENCE_CACHE_MS = 100;

interface Running {
  readonly informers: Informer<{ metadata: { name: string } } & Record<string, unknown>>[];
  readonly queues: WorkQueue[];
  readonly resync: NodeJS.Timeout;
}

export function createOperator(deps: OperatorDeps, options: OperatorOptions): Operator {
  const { kube, logger } = deps;
  const identity = options.identity ?? `${hostname()}-${process.pid}`;
  const metrics = createOperatorMetrics();
  const events = createEventRecorder({
    kube,
    controller: 'turnpike.dev/operator',
    instance: identity,
    onError: (error) => logger.warn({ err: error }, 'event not recorded'),
  });
  const box = createChannelKeyBox(deps.cryptoSecret);
  // Every change a resource makes is written with its audit row, actor "operator" (docs/adr/0045).
  const audit = { db: followAmbientTransaction(deps.db), bus: deferEventsInTransaction(deps.bus) };
  const channelWriter = auditChannelWrites(createChannelWriter({ ...audit, box }), audit);
  const batcher = createOptionBatcher(auditOptionWrites(createManagedOptionWriter(audit), audit));
  const ns = options.watchNamespace;
  let running: Running | undefined;
  let health: HealthServer | undefined;
  let stopping = false;
  const caches: { kind: string; informer: Informer<AnyResource> }[] = [];

  metrics.countResourcesWith(function* count() {
    for (const { kind, informer } of caches)
      for (const r of informer.list())
        yield { kind, ready: findCondition(r.status?.conditions, 'Ready')?.status ?? 'Unknown' };
  });

  let presence: { at: number; value: Promise<RelayPresence[]> } | undefined;
  async function relays(version: number): Promise<{ applied: number; total: number }> {
    if (!deps.redis) return { applied: 0, total: 0 };
    if (!presence || Date.now() - presence.at > PRESENCE_CACHE_MS) {
      const redis = deps.redis;
      presence = { at: Date.now(), value: readRelayPresence(redis, deps.redisKeyPrefix).catch(() => []) };
    }
    return countApplied(await presence.value, version);
  }

  function informerFor<T extends AnyResource>(info: KindInfo, onChange: (key: string) => void): Informer<T> {
    return createInformer<T>({
      name: info.kind,
      list: () => kube.list(info.plural, ns) as Promise<{ items: T[]; resourceVersion: string }>,
      watch: (rv, onEvent, done) =>
        kube.watch(kube.watchPath(info.plural, ns), { resourceVersion: rv }, onEvent, done),
      keyOf: (o) => keyOf(o.metadata),
      onChange: (key) => onChange(key),
      onRestart: (reason, error) => {
        metrics.watchRestarts.inc({ kind: info.kind });
        logger.warn({ kind: info.kind, reason, err: error }, 'watch restarted');
      },
      ...(options.informerBackoffMs
        ? { minBackoffMs: options.informerBackoffMs.min, maxBackoffMs: options.informerBackoffMs.max }
        : {}),
    });
  }

  function queueFor(kind: string, controller: () => Controller, concurrency: number): WorkQueue {
    return createWorkQueue((key) => controller().reconcile(key), {
      concurrency,
      baseDelayMs: 100,
      maxDelayMs: 60_000,
      onDepth: (depth) => metrics.queueDepth.set({ kind }, depth),
      onDone: (key, result, seconds, error) => {
        metrics.reconcileTotal.inc({ kind, result });
        metrics.reconcileDuration.observe({ kind }, seconds);
        if (error) logger.warn({ kind, key, err: error }, 'reconcile failed; retrying with backoff');
      },
    });
  }

  function startControllers(): void {
    if (running || stopping) return;
    caches.length = 0;
    const channelWorkers = options.concurrency?.channel ?? 8;
    const optionWorkers = options.concurrency?.option ?? 64;
    const channelQueue = queueFor(KINDS.Channel.kind, () => channelController, channelWorkers);
    const priceQueue = queueFor(KINDS.ModelPrice.kind, () => priceController, optionWorkers);
    const optionQueue = queueFor(KINDS.GatewayOption.kind, () => optionController, optionWorkers);
    const channels = informerFor<ChannelResource>(KINDS.Channel, (key) => channelQueue.add(key));
    const prices = informerFor<ModelPriceResource>(KINDS.ModelPrice, (key) => priceQueue.add(key));
    const gatewayOptions = informerFor<GatewayOptionResource>(KINDS.GatewayOption, (key) =>
      optionQueue.add(key),
    );
    // A Secret change re-queues the Channels that read it (rotation), found through the Channel cache.
    const secrets = createInformer<SecretObject>({
      name: 'Secret',
      list: () => kube.listSecrets(ns, `${CREDENTIAL_LABEL}=true`),
      watch: (rv, onEvent, done) =>
        kube.watch(
          kube.watchPath('secrets', ns),
          { resourceVersion: rv, labelSelector: `${CREDENTIAL_LABEL}=true` },
          onEvent,
          done,
        ),
      keyOf: (o) => keyOf(o.metadata),
      onChange: (key) => {
        for (const channel of channels.list())
          if (secretKeyOf(channel) === key) channelQueue.add(keyOf(channel.metadata));
      },
      onRestart: (reason, error) => {
        metrics.watchRestarts.inc({ kind: 'Secret' });
        logger.warn({ kind: 'Secret', reason, err: error }, 'watch restarted');
      },
      ...(options.informerBackoffMs
        ? { minBackoffMs: options.informerBackoffMs.min, maxBackoffMs: options.informerBackoffMs.max }
        : {}),
    });
    const depsOf = (kind: string) => ({
      kube,
      events,
      logger,
      onDatabaseUnavailable: () => metrics.databaseUnavailable.inc({ kind }),
    });
    const channelController = createController(
      channelHandlers({
        writer: channelWriter,
        secret: (namespace, name) => secrets.get(`${namespace}/${name}`),
        relays,
      }) as KindHandlers<ChannelResource>,
      channels,
      depsOf(KINDS.Channel.kind),
    );
    const priceController = createController(
      modelPriceHandlers({ batcher, relays }),
      prices,
      depsOf(KINDS.ModelPrice.kind),
    );
    const optionController = createController(
      gatewayOptionHandlers({ batcher, relays }),
      gatewayOptions,
      depsOf(KINDS.GatewayOption.kind),
    );
    caches.push(
      { kind: KINDS.Channel.kind, informer: channels as unknown as Informer<AnyResource> },
      { kind: KINDS.ModelPrice.kind, informer: prices as unknown as Informer<AnyResource> },
      { kind: KINDS.GatewayOption.kind, informer: gatewayOptions as unknown as Informer<AnyResource> },
    );
    // Secrets first, so the first Channel reconciles find their keys in the cache.
    secrets.start();
    const startQueues = () => {
      if (!running) return;
      if (!secrets.synced()) {
        setTimeout(startQueues, 10).unref();
        return;
      }
      for (const queue of running.queues) queue.start();
    };
    for (const informer of [channels, prices, gatewayOptions]) informer.start();
    const resync = setInterval(
      () => {
        for (const key of channelController.resyncKeys()) channelQueue.add(key);
        for (const key of priceController.resyncKeys()) priceQueue.add(key);
        for (const key of optionController.resyncKeys()) optionQueue.add(key);
      },
      options.resyncMs ?? 5 * 60_000,
    );
    resync.unref();
    running = {
      informers: [channels, prices, gatewayOptions, secrets] as unknown as Running['informers'],
      queues: [channelQueue, priceQueue, optionQueue],
      resync,
    };
    startQueues();
    logger.info({ identity }, 'leading: controllers started');
  }

  async function stopControllers(): Promise<void> {
    const current = running;
    running = undefined;
    if (!current) return;
    clearInterval(current.resync);
    for (const informer of current.informers) informer.stop();
    await Promise.all(current.queues.map((q) => q.stop()));
    await events.flush();
  }

  const elector = createLeaderElector({
    kube,
    namespace: options.leaseNamespace,
    name: options.leaseName,
    identity,
    ...(options.leaseDurationMs ? { leaseDurationMs: options.leaseDurationMs } : {}),
    ...(options.renewDeadlineMs ? { renewDeadlineMs: options.renewDeadlineMs } : {}),
    ...(options.retryPeriodMs ? { retryPeriodMs: options.retryPeriodMs } : {}),
    onStartedLeading: () => {
      metrics.leader.set(1);
      startControllers();
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      logger.warn({ identity }, 'lost the lease: controllers stopped');
      void stopControllers().then(() => options.onLostLeadership?.());
    },
    onError: (error) => logger.warn({ err: error }, 'lease renewal failed'),
  });

  return {
    metrics,
    identity,
    get port() {
      return health?.port;
    },
    async start() {
      metrics.leader.set(0);
      if (options.port !== undefined)
        health = await startHealthServer({
          port: options.port,
          ...(options.host ? { host: options.host } : {}),
          registry: metrics.registry,
          // A standby is ready (to take over); a leader once its caches are filled.
          ready: () => !running || running.informers.every((i) => i.synced()),
        });
      elector.start();
    },
    async stop({ releaseLease = true } = {}) {
      stopping = true;
      await stopControllers();
      await elector.stop(releaseLease);
      metrics.leader.set(0);
      await health?.close();
    },
    isLeader: () => elector.isLeader(),
    idle: () => {
      const current = running;
      if (!current) return false;
      return current.informers.every((i) => i.synced()) && current.queues.every((q) => q.idle());
    },
  };
}

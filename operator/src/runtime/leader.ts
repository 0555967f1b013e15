/**
 * Leader election on a coordination.k8s.io Lease, with controller-runtime's timing by default (lease 15 s, renew
 * deadline 10 s, retry 2 s). Only the leader reconciles (writes); the others wait and take over once the
 * lease expires. Every write of the Lease carries its resourceVersion, so two candidates racing for an expired
 * lease cannot both win (409 Conflict for the loser).
 */
import { type KubeClient, KubeError, type LeaseObject } from '../kube/client.ts';

export interface LeaderElectorOptions {
  readonly kube: KubeClient;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly onStartedLeading: () => void;
  /** Leadership lost (renewals failed for the renew deadline, or someone else holds the lease). */
  readonly onStoppedLeading: () => void;
  readonly onError?: (error: unknown) => void;
  readonly now?: () => number;
}

export interface LeaderElector {
  start(): void;
  /**
   * Stops renewing; a leader releases the lease so a standby takes over at once, unless `release` is false
   * (what a crash looks like: the standby waits for the lease to expire).
   */
  stop(release?: boolean): Promise<void>;
  isLeader(): boolean;
}

const microTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

export function createLeaderElector(options: LeaderElectorOptions): LeaderElector {
  const { kube, namespace, name, identity } = options;
  const leaseDurationMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = options.retryPeriodMs ?? 2_000;
  const now = options.now ?? Date.now;
  let leader = false;
  let lastRenew = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let busy: Promise<void> = Promise.resolve();

  const leaseSpec = (previous: LeaseObject['spec'], at: number) => ({
    holderIdentity: identity,
    leaseDurationSeconds: Math.max(1, Math.round(leaseDurationMs / 1000)),
    acquireTime:
      previous?.holderIdentity === identity && previous.acquireTime ? previous.acquireTime : microTime(at),
    renewTime: microTime(at),
    leaseTransitions:
      (previous?.leaseTransitions ?? 0) +
      (previous?.holderIdentity && previous.holderIdentity !== identity ? 1 : 0),
  });

  /** One try: true when this process holds the lease afterwards. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const at = now();
    const lease = await kube.readLease(namespace, name);
    if (!lease) {
      await kube.createLease(namespace, { metadata: { name, namespace }, spec: leaseSpec(undefined, at) });
      return true;
    }
    const spec = lease.spec ?? {};
    const renewedAt = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
    const heldByOther = spec.holderIdentity && spec.holderIdentity !== identity && renewedAt + duration > at;
    if (heldByOther) return false;
    await kube.replaceLease(namespace, { ...lease, spec: leaseSpec(spec, at) });
    return true;
  }

  async function tick(): Promise<void> {
    try {
      const holds = await tryAcquireOrRenew();
      if (holds) {
        lastRenew = now();
        if (!leader) {
          leader = true;
          options.onStartedLeading();
        }
      } else if (leader) lose();
    } catch (error) {
      if (!(error instanceof KubeError && (error.code === 409 || error.code === 404)))
        options.onError?.(error);
      if (leader && now() - lastRenew > renewDeadlineMs) lose();
    }
  }

  function lose(): void {
    leader = false;
    options.onStoppedLeading();
  }

  function loop(): void {
    if (stopped) return;
    busy = tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, retryPeriodMs);
    });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    async stop(release = true) {
      stopped = true;
      if (timer) clearTimeout(timer);
      await busy;
      if (!leader) return;
      leader = false;
      if (!release) return;
      try {
        const lease = await kube.readLease(namespace, name);
        if (lease?.spec?.holderIdentity === identity)
          await kube.replaceLease(namespace, {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: '',
              leaseDurationSeconds: 1,
              renewTime: microTime(now() - 2000),
            },
          });
      } catch (error) {
        options.onError?.(error);
      }
    },
    isLeader: () => leader,
  };
}

/**
 * Kubernetes Events about our resources, aggregated like client-go's recorder does: the same reason and note
 * about the same object is sent at most once per `windowMs`. Notes are our own messages (never key material).
 * A failure to record is reported, never thrown: an Event is a courtesy, not part of the reconcile.
 */
import type { EventInput, KubeClient } from '../kube/client.ts';

export interface EventRecorder {
  record(event: EventInput): void;
  /** Waits for Events being sent (tests, shutdown). */
  flush(): Promise<void>;
}

export function createEventRecorder(options: {
  kube: KubeClient;
  controller: string;
  instance: string;
  windowMs?: number;
  onError?: (error: unknown) => void;
}): EventRecorder {
  const windowMs = options.windowMs ?? 5 * 60_000;
  const sent = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  return {
    record(event) {
      const key = `${event.namespace}/${event.regarding.kind}/${event.regarding.name}/${event.reason}/${event.note}`;
      const at = Date.now();
      if ((sent.get(key) ?? -Infinity) + windowMs > at) return;
      sent.set(key, at);
      if (sent.size > 10_000) for (const [k, t] of sent) if (t + windowMs <= at) sent.delete(k);
      const job = options.kube
        .createEvent(event, options.controller, options.instance)
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => pending.delete(job));
      pending.add(job);
    },
    async flush() {
      await Promise.allSettled([...pending]);
    },
  };
}

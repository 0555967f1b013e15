/**
 * Group commit for owned option values: ModelPrice and GatewayOption reconciles that arrive while a write is
 * running are applied together in the next one (one transaction, one `options.changed`), so a cold start of
 * thousands of prices makes every relay re-read the price maps a few dozen times, not once per price. Each
 * resource still writes only its own rows.
 */
import type {
  ManagedOptionsOutcome,
  ManagedOptionsRequest,
  ManagedOptionWriter,
} from '@turnpike/core/options/managed-options';

export interface OptionBatcher {
  apply(request: ManagedOptionsRequest): Promise<ManagedOptionsOutcome>;
}

export function createOptionBatcher(writer: ManagedOptionWriter, maxBatch = 500): OptionBatcher {
  let pending: {
    request: ManagedOptionsRequest;
    resolve: (o: ManagedOptionsOutcome) => void;
    reject: (e: unknown) => void;
  }[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (pending.length > 0) {
        const batch = pending.slice(0, maxBatch);
        pending = pending.slice(batch.length);
        try {
          const outcomes = await writer.applyBatch(batch.map((p) => p.request));
          for (const [i, p] of batch.entries()) p.resolve(outcomes[i] as ManagedOptionsOutcome);
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    apply(request) {
      return new Promise((resolve, reject) => {
        pending.push({ request, resolve, reject });
        // Let the reconciles of this turn of the event loop join the batch.
        if (!running) setImmediate(() => void (running ? undefined : drain()));
      });
    },
  };
}

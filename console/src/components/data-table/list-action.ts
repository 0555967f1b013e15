import type { ReactNode } from 'react';
import { toast } from '../../lib/toast.ts';
import { useKeySet } from './key-set.ts';
import { useConfirm } from './use-confirm.tsx';

export interface ListActionOptions {
  /** Toasted when the call succeeds. */
  readonly done?: string;
  /** Marked busy while the call runs (a row's button shows a spinner). */
  readonly busyKey?: string;
  /** Refresh the list when the call failed too (an inline edit shows the stored value again); default false. */
  readonly refreshOnFailure?: boolean;
}

/** An action that asks first (a delete): the dialog's texts, the call, and what follows its success. */
export interface ConfirmedAction<R> {
  readonly title: ReactNode;
  readonly message?: ReactNode;
  readonly danger?: boolean;
  readonly call: () => Promise<R>;
  /** Toasted after the call, from what it answered (a count). */
  readonly done: (result: R) => string;
  /** Runs before the refresh (a deleted row leaves the selection). */
  readonly after?: (result: R) => void;
}

/**
 * The one way a list page runs a row or toolbar action: mark it busy, call, toast success, refresh the list. A
 * failure has already been shown by the request client, so it is only swallowed here. `confirm` asks first in the
 * page's one confirmation dialog, which `dialog` renders.
 */
export function useListAction(refresh: () => void) {
  const busy = useKeySet<string>();
  const confirmation = useConfirm();
  const confirm = <R>({ call, done, after, ...texts }: ConfirmedAction<R>) =>
    confirmation.ask({
      ...texts,
      run: async () => {
        const result = await call();
        toast.success(done(result));
        after?.(result);
        refresh();
      },
    });
  const run = async (call: () => Promise<unknown>, options: ListActionOptions = {}): Promise<void> => {
    const { done, busyKey, refreshOnFailure = false } = options;
    if (busyKey) busy.set(busyKey, true);
    let succeeded = false;
    try {
      await call();
      succeeded = true;
      if (done) toast.success(done);
    } catch {
      // the request client has shown the message
    } finally {
      if (busyKey) busy.set(busyKey, false);
      if (succeeded || refreshOnFailure) refresh();
    }
  };
  return { busy: busy.keys, mark: busy.set, run, confirm, dialog: confirmation.dialog };
}

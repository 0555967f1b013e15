import { type ReactNode, useState } from 'react';
import { ConfirmDialog } from '../ui/modal.tsx';

export interface ConfirmRequest {
  readonly title: ReactNode;
  readonly message?: ReactNode;
  readonly confirmText?: string;
  readonly danger?: boolean;
  /** Runs on confirm; the dialog stays open and busy until it settles. A failure has shown its own message. */
  readonly run: () => Promise<void>;
}

/**
 * One confirmation dialog for a page's destructive actions: `ask` opens it, `dialog` renders it. Replaces the
 * "which row is being deleted" and "busy" states each list page kept.
 */
export function useConfirm() {
  const [request, setRequest] = useState<ConfirmRequest | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    if (!request) return;
    setBusy(true);
    try {
      await request.run();
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(false);
      setRequest(null);
    }
  };
  return {
    ask: setRequest,
    dialog: (
      <ConfirmDialog
        open={request !== null}
        danger={request?.danger}
        loading={busy}
        title={request?.title ?? ''}
        message={request?.message}
        confirmText={request?.confirmText}
        onCancel={() => setRequest(null)}
        onConfirm={() => void confirm()}
      />
    ),
  };
}

/**
 * What a page's side sheet or dialog shows (a row to edit, `null` for a new one), or closed; `initial` opens it at
 * once (an address such as /channel/add).
 */
export function useSheet<T>(initial?: T) {
  const [value, setValue] = useState<{ readonly of: T } | null>(
    initial === undefined ? null : { of: initial },
  );
  return {
    isOpen: value !== null,
    of: value?.of,
    open: (of: T) => setValue({ of }),
    close: () => setValue(null),
  };
}

/** A tiny toast store: product code calls `toast.error(...)`; the <Toaster/> renders the queue. */
export type ToastKind = 'success' | 'error' | 'info' | 'warning';
export interface ToastItem {
  id: number;
  kind: ToastKind;
  text: string;
}

type Listener = (items: readonly ToastItem[]) => void;
let items: readonly ToastItem[] = [];
let nextId = 1;
const listeners = new Set<Listener>();
const DISMISS_MS = 4000;

function emit() {
  for (const listener of listeners) listener(items);
}

export function dismissToast(id: number): void {
  items = items.filter((item) => item.id !== id);
  emit();
}

function push(kind: ToastKind, text: string): number {
  const id = nextId++;
  // the same message twice in a row (e.g. parallel failing requests) shows once
  if (items.some((item) => item.text === text && item.kind === kind)) return id;
  items = [...items, { id, kind, text }];
  emit();
  setTimeout(() => dismissToast(id), DISMISS_MS);
  return id;
}

export const toast = {
  success: (text: string) => push('success', text),
  error: (text: string) => push('error', text),
  info: (text: string) => push('info', text),
  warning: (text: string) => push('warning', text),
};

export function subscribeToasts(listener: Listener): () => void {
  listeners.add(listener);
  listener(items);
  return () => listeners.delete(listener);
}

export function getToasts(): readonly ToastItem[] {
  return items;
}

/** Local storage keys the console uses (spec 03 section 3); one place so nobody misspells them. */
export const StorageKey = {
  User: 'user',
  Status: 'status',
  Theme: 'theme-mode',
  CollapseSidebar: 'default_collapse_sidebar',
  FooterHtml: 'footer_html',
  EnableDataExport: 'enable_data_export',
  EnableDrawing: 'enable_drawing',
  EnableTask: 'enable_task',
  MjNotifyEnabled: 'mj_notify_enabled',
  Chats: 'chats',
  Language: 'i18nextLng',
  AffCode: 'aff',
} as const;

/** Reads a key, tolerating a storage that throws (private mode) or is absent (tests, server). */
export function readStored(key: string): string | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writeStored(key: string, value: string | null): void {
  try {
    if (typeof localStorage === 'undefined') return;
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // storage full or blocked: the console still works, it just forgets
  }
}

export function readStoredJson<T>(key: string): T | null {
  const raw = readStored(key);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

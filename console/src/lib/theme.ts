import { useSyncExternalStore } from 'react';
import { readStored, StorageKey, writeStored } from './storage.ts';

export type ThemeMode = 'light' | 'dark';
const listeners = new Set<() => void>();

function systemPrefersDark(): boolean {
  return typeof window !== 'undefined' && typeof window.matchMedia === 'function'
    ? window.matchMedia('(prefers-color-scheme: dark)').matches
    : false;
}

export function getTheme(): ThemeMode {
  const stored = readStored(StorageKey.Theme);
  if (stored === 'dark' || stored === 'light') return stored;
  return systemPrefersDark() ? 'dark' : 'light';
}

/** Puts the `dark` class on <html> (Tailwind's dark variant keys on it). */
export function applyTheme(mode: ThemeMode = getTheme()): void {
  if (typeof document === 'undefined') return;
  document.documentElement.classList.toggle('dark', mode === 'dark');
  document.documentElement.style.colorScheme = mode;
}

export function setTheme(mode: ThemeMode): void {
  writeStored(StorageKey.Theme, mode);
  applyTheme(mode);
  for (const listener of listeners) listener();
}

export function useTheme(): [ThemeMode, (mode: ThemeMode) => void] {
  const mode = useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    getTheme,
    () => 'light' as ThemeMode,
  );
  return [mode, setTheme];
}

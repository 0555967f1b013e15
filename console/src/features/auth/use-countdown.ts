import { useEffect, useState } from 'react';

/** Seconds left of a resend wait; `start()` begins a new wait. */
export function useCountdown(seconds: number): { left: number; start: () => void } {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const timer = setTimeout(() => setLeft((n) => n - 1), 1000);
    return () => clearTimeout(timer);
  }, [left]);
  return { left, start: () => setLeft(seconds) };
}

/** Email verification resend wait and password reset retry wait (spec 01 and 02 section 9). */
export const RESEND_WAIT_SECONDS = 30;

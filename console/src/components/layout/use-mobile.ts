import { useEffect, useState } from 'react';

/** The 600 px mobile rule (spec 01 section 9). */
export const MOBILE_MAX_WIDTH = 600;

export function useIsMobile(): boolean {
  const [mobile, setMobile] = useState(
    () => typeof window !== 'undefined' && window.innerWidth <= MOBILE_MAX_WIDTH,
  );
  useEffect(() => {
    const onResize = () => setMobile(window.innerWidth <= MOBILE_MAX_WIDTH);
    window.addEventListener('resize', onResize);
    return () => window.removeEventListener('resize', onResize);
  }, []);
  return mobile;
}

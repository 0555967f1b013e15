/**
 * The settings' budget windows per group, loaded when shown: the settings page is part of the console's first
 * download (its route reads the tab), whose budget (scripts/report-size.ts) has little room left.
 */
import { lazy, Suspense } from 'react';
import type { OptionValues } from '../../settings/api/options.ts';

const GroupQuotaWindows = lazy(async () => ({
  default: (await import('./group-quota-windows.tsx')).GroupQuotaWindows,
}));

export function GroupQuotaWindowsSection({ values }: { values: OptionValues }) {
  return (
    <Suspense fallback={null}>
      <GroupQuotaWindows values={values} />
    </Suspense>
  );
}

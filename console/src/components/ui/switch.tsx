import { Switch as HeadlessSwitch } from '@headlessui/react';
import type { ReactNode } from 'react';

export interface SwitchProps {
  checked: boolean;
  onChange: (checked: boolean) => void;
  label?: ReactNode;
  disabled?: boolean;
}

export function Switch({ checked, onChange, label, disabled }: SwitchProps) {
  return (
    <div className="flex items-center gap-2">
      <HeadlessSwitch
        checked={checked}
        onChange={onChange}
        disabled={disabled}
        aria-label={typeof label === 'string' ? label : undefined}
        className="group relative inline-flex h-6 w-11 shrink-0 items-center rounded-full bg-gray-300 transition-colors data-checked:bg-blue-600 data-disabled:opacity-50 dark:bg-gray-600"
      >
        <span className="inline-block h-4 w-4 translate-x-1 rounded-full bg-white transition-transform group-data-checked:translate-x-6" />
      </HeadlessSwitch>
      {label ? <span className="text-sm">{label}</span> : null}
    </div>
  );
}

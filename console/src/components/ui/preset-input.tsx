import type { ReactNode } from 'react';
import { Button } from './button.tsx';
import { Input, type InputProps } from './input.tsx';

export interface Preset {
  readonly value: string;
  readonly label: ReactNode;
}

/** A text field with a row of buttons below that fill it with a preset value. */
export function PresetInput({
  presets,
  onPick,
  ...input
}: InputProps & { presets: readonly Preset[]; onPick(value: string): void }) {
  return (
    <div className="flex flex-col gap-2">
      <Input {...input} />
      <div className="flex flex-wrap gap-2">
        {presets.map((preset) => (
          <Button key={preset.value} size="sm" variant="secondary" onClick={() => onPick(preset.value)}>
            {preset.label}
          </Button>
        ))}
      </div>
    </div>
  );
}

import type { ReactNode } from 'react';
import { Button, type ButtonVariant } from '../ui/button.tsx';

/** One button of a list page's toolbar. */
export interface ToolbarAction {
  readonly label: string;
  readonly onClick: () => void;
  readonly variant?: ButtonVariant;
  readonly loading?: boolean;
}

/** The row of buttons between a list page's filters and its table, then what else the row holds (switches, a count). */
export function Toolbar({ actions, children }: { actions: readonly ToolbarAction[]; children?: ReactNode }) {
  return (
    <div className="mb-3 flex flex-wrap items-center gap-2">
      {actions.map((action) => (
        <Button key={action.label} variant={action.variant} loading={action.loading} onClick={action.onClick}>
          {action.label}
        </Button>
      ))}
      {children}
    </div>
  );
}

export { Button, type ButtonProps } from './button.tsx';
export { cx } from './cx.ts';
export {
  DataTable,
  DEFAULT_PAGE_SIZE,
  PAGE_SIZE_OPTIONS,
  type TableColumn,
  usePageSize,
} from './data-table.tsx';
export { EmptyState } from './empty-state.tsx';
export { Input, Select, type SelectOption, Textarea } from './input.tsx';
export { ConfirmDialog, DialogFooter, Modal } from './modal.tsx';
export { type Preset, PresetInput } from './preset-input.tsx';
export { FormSheet, SideSheet } from './side-sheet.tsx';
export { PageSpinner, Spinner } from './spinner.tsx';
export { Switch } from './switch.tsx';
export { Tag } from './tag.tsx';
export { Toaster } from './toaster.tsx';
export { useCopy } from './use-copy.tsx';

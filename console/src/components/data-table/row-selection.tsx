import { useState } from 'react';
import type { TableColumn } from './data-table.tsx';

/**
 * Checkbox selection of the rows a table shows: the ids picked, the rows of this page that are picked, and the
 * leading column with a select-all box and one box per row. `labels` name the boxes for screen readers.
 */
export function useRowSelection<Row extends { id: number }>(
  rows: readonly Row[],
  labels: { all: string; row: (row: Row) => string },
) {
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.id));
  const set = (id: number, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const column: TableColumn<Row> = {
    id: 'select',
    header: () => (
      <input
        type="checkbox"
        aria-label={labels.all}
        checked={allSelected}
        onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((r) => r.id)) : new Set())}
      />
    ),
    cell: ({ row }) => (
      <input
        type="checkbox"
        aria-label={labels.row(row.original)}
        checked={selected.has(row.original.id)}
        onChange={(e) => set(row.original.id, e.target.checked)}
      />
    ),
  };
  return {
    chosen: rows.filter((r) => selected.has(r.id)),
    clear: () => setSelected(new Set()),
    remove: (id: number) => set(id, false),
    column,
  };
}

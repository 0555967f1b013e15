import { Fragment, type ReactNode } from 'react';
import { Spinner } from '../ui/spinner.tsx';

/** One column of a {@link RowTable}: its header and what a row shows in it. */
export interface RowColumn<T> {
  readonly id: string;
  readonly header: ReactNode;
  readonly cell: (row: T) => ReactNode;
}

/** Rows that open to show more under them (a log's details). */
export interface RowDetails<T> {
  readonly isOpen: (row: T) => boolean;
  readonly toggle: (row: T) => void;
  /** What the opened row shows under it. */
  readonly render: (row: T) => ReactNode;
  /** Screen-reader names of the toggle column and of one row's toggle. */
  readonly columnLabel: string;
  readonly toggleLabel: (row: T) => string;
}

export interface RowTableProps<T> {
  columns: readonly RowColumn<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string | number;
  /** A spinner instead of the empty state (the first load). */
  loading?: boolean;
  /** Shown under the header when there are no rows. */
  empty: ReactNode;
  details?: RowDetails<T>;
}

const headClass = 'whitespace-nowrap px-3 py-2 text-left font-medium text-gray-600 dark:text-gray-300';

/**
 * The list kit's table for pages whose rows are not a tanstack table (a list loaded page after page, rows that
 * open): the same frame, header and rows as {@link DataTable}, without its pager.
 */
export function RowTable<T>({ columns, rows, rowKey, loading, empty, details }: RowTableProps<T>) {
  return (
    <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
      <table className="min-w-full divide-y divide-gray-200 text-sm dark:divide-gray-700">
        <thead className="bg-gray-50 dark:bg-gray-800">
          <tr>
            {details ? (
              <th className="w-8 px-2 py-2">
                <span className="sr-only">{details.columnLabel}</span>
              </th>
            ) : null}
            {columns.map((c) => (
              <th key={c.id} className={headClass}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
          {rows.map((row) => {
            const open = details?.isOpen(row) ?? false;
            return (
              <Fragment key={rowKey(row)}>
                <tr className="hover:bg-gray-50 dark:hover:bg-gray-800/50">
                  {details ? (
                    <td className="px-2 py-2">
                      <button
                        type="button"
                        aria-expanded={open}
                        aria-label={details.toggleLabel(row)}
                        className="rounded px-1 text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
                        onClick={() => details.toggle(row)}
                      >
                        {open ? '▾' : '▸'}
                      </button>
                    </td>
                  ) : null}
                  {columns.map((c) => (
                    <td key={c.id} className="whitespace-nowrap px-3 py-2 align-middle">
                      {c.cell(row)}
                    </td>
                  ))}
                </tr>
                {details && open ? (
                  <tr className="bg-gray-50 dark:bg-gray-800/40">
                    <td />
                    <td colSpan={columns.length} className="px-3 py-2">
                      {details.render(row)}
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
      <TableState loading={loading} empty={rows.length === 0 ? empty : null} />
    </div>
  );
}

/** Under a table's rows: a spinner while the first page loads, else `empty` (the empty state when there are no rows). */
export function TableState({ loading, empty }: { loading?: boolean; empty?: ReactNode }) {
  return loading ? (
    <div className="flex justify-center py-6 text-blue-600">
      <Spinner />
    </div>
  ) : (
    (empty ?? null)
  );
}

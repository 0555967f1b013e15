import { type ColumnDef, flexRender, type RowData, tableFeatures, useTable } from '@tanstack/react-table';
import { useState } from 'react';
import { readStored, writeStored } from '../../lib/storage.ts';
import { EmptyState } from '../ui/empty-state.tsx';
import { PAGE_SIZE_OPTIONS, Pager } from './pager.tsx';
import { TableState } from './row-table.tsx';

export { PAGE_SIZE_OPTIONS };
export const DEFAULT_PAGE_SIZE = 10;

const features = tableFeatures({});
export type TableColumn<T extends RowData> = ColumnDef<typeof features, T>;

/** The page size chosen for one table, remembered in local storage under `page-size-<tableId>`. */
export function usePageSize(tableId: string): [number, (size: number) => void] {
  const key = `page-size-${tableId}`;
  const [size, setSize] = useState(() => {
    const stored = Number(readStored(key));
    return (PAGE_SIZE_OPTIONS as readonly number[]).includes(stored) ? stored : DEFAULT_PAGE_SIZE;
  });
  return [
    size,
    (next) => {
      writeStored(key, String(next));
      setSize(next);
    },
  ];
}

export interface DataTableProps<T extends RowData> {
  columns: TableColumn<T>[];
  data: T[];
  loading?: boolean;
  /** Server-side paging: 1-based page, total row count. */
  page: number;
  pageSize: number;
  total: number;
  onPageChange: (page: number) => void;
  onPageSizeChange: (size: number) => void;
  rowKey?: (row: T) => string | number;
}

/** A table over @tanstack/react-table with server-side paging and a remembered page size. */
export function DataTable<T extends RowData>({
  columns,
  data,
  loading,
  page,
  pageSize,
  total,
  onPageChange,
  onPageSizeChange,
  rowKey,
}: DataTableProps<T>) {
  const table = useTable<typeof features, T>({ features, columns, data });
  return (
    <div className="flex flex-col gap-3">
      <div className="overflow-x-auto rounded-lg border border-gray-200 dark:border-gray-700">
        <table className="min-w-full divide-y divide-gray-200 text-sm dark:divide-gray-700">
          <thead className="bg-gray-50 dark:bg-gray-800">
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => (
                  <th
                    key={header.id}
                    className="whitespace-nowrap px-3 py-2 text-left font-medium text-gray-600 dark:text-gray-300"
                  >
                    {header.isPlaceholder
                      ? null
                      : flexRender(header.column.columnDef.header, header.getContext())}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
            {table.getRowModel().rows.map((row) => (
              <tr
                key={rowKey ? rowKey(row.original) : row.id}
                className="hover:bg-gray-50 dark:hover:bg-gray-800/50"
              >
                {row.getAllCells().map((cell) => (
                  <td key={cell.id} className="whitespace-nowrap px-3 py-2">
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        <TableState loading={loading} empty={data.length === 0 ? <EmptyState /> : null} />
      </div>
      <Pager
        page={page}
        pageSize={pageSize}
        total={total}
        onPageChange={onPageChange}
        onPageSizeChange={onPageSizeChange}
      />
    </div>
  );
}

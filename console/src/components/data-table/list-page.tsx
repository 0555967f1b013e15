import type { RowData } from '@tanstack/react-table';
import type { FormEvent, ReactNode } from 'react';
import { Button } from '../ui/button.tsx';
import { DataTable, type TableColumn, usePageSize } from './data-table.tsx';
import { type ListSearch, useListSearch } from './list-search.ts';
import { Pager, type PagerProps } from './pager.tsx';

/** Paging of a list: the page from the URL, the page size remembered per table. */
export type Paging = Omit<PagerProps, 'summary' | 'hasMore'> &
  Partial<Pick<PagerProps, 'summary' | 'hasMore'>>;

/**
 * A list page's URL state and paging in one: {@link useListSearch} plus the page size remembered for `tableId`.
 * Changing the page size goes back to the first page.
 */
export function useListPage<S extends { page: number }>(list: ListSearch<S>, tableId: string) {
  const url = useListSearch(list);
  const [pageSize, setPageSize] = usePageSize(tableId);
  return {
    ...url,
    pageSize,
    /** The pager's props; `beforePageChange` runs first (a selection that belongs to one page is cleared). */
    paging: (total: number, beforePageChange?: () => void): Paging => ({
      page: url.search.page,
      pageSize,
      total,
      onPageChange: (page) => {
        beforePageChange?.();
        url.setPage(page);
      },
      onPageSizeChange: (size) => {
        setPageSize(size);
        url.setPage(1);
      },
    }),
  };
}

/** A list shown whole: one page, nothing to turn. */
const onePage = (count: number): Paging => ({
  page: 1,
  pageSize: Math.max(count, 1),
  total: count,
  onPageChange: () => undefined,
  onPageSizeChange: () => undefined,
});

export interface FilterBarProps {
  onSubmit: () => void;
  onReset?: () => void;
  submitLabel: string;
  resetLabel?: string;
  loading?: boolean;
  /** The filter inputs. */
  children: ReactNode;
  /** More buttons after Submit and Reset (add, copy selected, column settings). */
  actions?: ReactNode;
  /** Grid classes of the form; a wrapping row by default. */
  className?: string;
}

/** The filter form of a list page: its inputs, then Submit, Reset and the page's own buttons. */
export function FilterBar({
  onSubmit,
  onReset,
  submitLabel,
  resetLabel,
  loading,
  children,
  actions,
  className = 'mb-4 flex flex-wrap items-end gap-2',
}: FilterBarProps) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  return (
    <form onSubmit={submit} className={className} noValidate>
      {children}
      <div className="flex flex-wrap items-end gap-2">
        <Button type="submit" loading={loading}>
          {submitLabel}
        </Button>
        {onReset && resetLabel ? (
          <Button variant="secondary" onClick={onReset}>
            {resetLabel}
          </Button>
        ) : null}
        {actions}
      </div>
    </form>
  );
}

export interface ListPageProps<T extends RowData> {
  title: ReactNode;
  /** A note under the title. */
  intro?: ReactNode;
  /** The filter form ({@link FilterBar}). */
  filters?: ReactNode;
  /** Between the filters and the table: totals, bulk actions. */
  summary?: ReactNode;
  /** Columns and rows for the shared {@link DataTable}; leave out when `table` draws its own. */
  columns?: TableColumn<T>[];
  rows?: T[];
  rowKey?: (row: T) => string | number;
  loading?: boolean;
  /** A table of the page's own (expandable rows, a task log), drawn above the shared pager. */
  table?: ReactNode;
  /** Leave out when `table` brings its own pager (the task logs, which load page after page). */
  paging?: Paging;
  /** Shown instead of the table while the list is empty (a first-use hint with its action). */
  empty?: ReactNode;
  /** Sheets and dialogs of the page. */
  children?: ReactNode;
}

/**
 * The shell every console list shares: title, intro, filters, summary, then the table with its pager, or the
 * empty state; the page's sheets and dialogs after it. The filters and page come from the URL
 * ({@link useListPage}), so the shell itself keeps no state.
 */
export function ListPage<T extends RowData>({
  title,
  intro,
  filters,
  summary,
  columns,
  rows,
  rowKey,
  loading,
  table,
  paging,
  empty,
  children,
}: ListPageProps<T>) {
  let body: ReactNode;
  if (empty) body = empty;
  else if (table !== undefined) {
    body = (
      <div className="flex flex-col gap-3">
        {table}
        {paging ? <Pager {...paging} /> : null}
      </div>
    );
  } else {
    body = (
      <DataTable
        columns={columns ?? []}
        data={rows ?? []}
        loading={loading}
        rowKey={rowKey}
        {...(paging ?? onePage(rows?.length ?? 0))}
      />
    );
  }
  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">{title}</h1>
      {intro}
      {filters}
      {summary}
      {body}
      {children}
    </section>
  );
}

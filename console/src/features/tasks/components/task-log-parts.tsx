import type { FormEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { type RowColumn, RowTable } from '../../../components/data-table/index.ts';
import { Pager } from '../../../components/data-table/pager.tsx';
import { Button, EmptyState, Input } from '../../../components/ui/index.ts';
import type { ServerPages } from '../use-server-pages.ts';
import type { TaskFilterErrors, TaskFilterInput } from '../validation.ts';

/** The filter form of both logs: channel id (admins only), task id, start and end time. */
export function TaskFilterForm({
  value,
  errors,
  admin,
  loading,
  onChange,
  onSubmit,
  onReset,
}: {
  value: TaskFilterInput;
  errors: TaskFilterErrors;
  admin: boolean;
  loading: boolean;
  onChange: (next: TaskFilterInput) => void;
  onSubmit: () => void;
  onReset: () => void;
}) {
  const { t } = useTranslation('tasks');
  const set = (key: keyof TaskFilterInput) => (e: { target: { value: string } }) =>
    onChange({ ...value, [key]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  return (
    <form onSubmit={submit} noValidate className="mb-3 grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-5">
      {admin ? (
        <Input
          label={t('filter.channel')}
          value={value.channel}
          inputMode="numeric"
          onChange={set('channel')}
          error={errors.channel ? t(errors.channel) : null}
        />
      ) : null}
      <Input
        label={t('filter.taskId')}
        value={value.taskId}
        onChange={set('taskId')}
        error={errors.taskId ? t(errors.taskId) : null}
      />
      <Input type="datetime-local" label={t('filter.start')} value={value.start} onChange={set('start')} />
      <Input
        type="datetime-local"
        label={t('filter.end')}
        value={value.end}
        onChange={set('end')}
        error={errors.end ? t(errors.end) : null}
      />
      <div className="flex items-end gap-2">
        <Button type="submit" loading={loading}>
          {t('filter.submit')}
        </Button>
        <Button variant="secondary" onClick={onReset}>
          {t('filter.reset')}
        </Button>
      </div>
    </form>
  );
}

/**
 * The table of a task log with its footer: "Items {start} - {end} of {total}" counts the rows loaded so far,
 * and "next" stays open while the last server page was full (the paging rule of `useServerPages`).
 */
export function TaskLogTable<T>({
  columns,
  list,
  rowKey,
  pageSize,
  onPageSizeChange,
  empty,
}: {
  columns: RowColumn<T>[];
  list: ServerPages<T>;
  rowKey: (row: T) => string | number;
  pageSize: number;
  onPageSizeChange: (size: number) => void;
  empty: ReactNode;
}) {
  const { t } = useTranslation('tasks');
  const first = list.rows.length === 0 ? 0 : (list.page - 1) * pageSize + 1;
  const last = (list.page - 1) * pageSize + list.rows.length;
  return (
    <>
      <RowTable columns={columns} rows={list.rows} rowKey={rowKey} loading={list.isLoading} empty={empty} />
      <div className="mt-3">
        <Pager
          page={list.page}
          pageSize={pageSize}
          total={list.loaded}
          hasMore={list.hasMore}
          summary={t('pager.summary', { start: first, end: last, total: list.loaded })}
          onPageChange={(page) => void list.goTo(page)}
          onPageSizeChange={onPageSizeChange}
        />
      </div>
    </>
  );
}

/** The empty state of a task log: what the list holds and what to try. */
export function TaskLogEmpty({ title, hint, failed }: { title: string; hint: string; failed: boolean }) {
  const { t } = useTranslation('tasks');
  return (
    <EmptyState title={failed ? t('empty.failed') : title}>
      <p className="max-w-md px-4 text-sm">{failed ? t('empty.failedHint') : hint}</p>
    </EmptyState>
  );
}

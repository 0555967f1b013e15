import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ListPage, type RowColumn, usePageSize } from '../../../components/data-table/index.ts';
import { Tag } from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatTimestamp } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useStatus } from '../../../lib/status.ts';
import { fetchTasks, type TaskFilters, type TaskRow } from '../api/tasks.ts';
import {
  defaultTaskRange,
  fromLocalInput,
  spentSeconds,
  TASK_ACTIONS,
  TASK_COLUMNS,
  TASK_PLATFORMS,
  type TaskColumn,
  taskStatusLook,
  toLocalInput,
  videoContentUrl,
  visibleColumns,
} from '../rules.ts';
import { useServerPages } from '../use-server-pages.ts';
import { useTaskFilters } from '../use-task-filters.ts';
import type { TaskFilterInput } from '../validation.ts';
import { ChannelTag, ClippedText, ProgressRing, SpentTag, TextDialog } from './cells.tsx';
import { TaskFilterForm, TaskLogEmpty, TaskLogTable } from './task-log-parts.tsx';

function initialForm(): TaskFilterInput {
  const range = defaultTaskRange();
  return { taskId: '', channel: '', start: toLocalInput(range.start), end: toLocalInput(range.end) };
}

/** Creative task times are seconds on the wire. */
const toFilters = (form: TaskFilterInput): TaskFilters => ({
  taskId: form.taskId,
  channelId: form.channel,
  start: Math.floor(fromLocalInput(form.start) / 1000),
  end: Math.floor(fromLocalInput(form.end) / 1000),
});

/** The creative task log (Suno music and lyrics, videos): administrators see every task and its channel. */
export function TaskLogPage() {
  const { t } = useTranslation('tasks');
  const admin = isAdmin(useSessionUser());
  const [pageSize, setPageSize] = usePageSize('task');
  const { form, setForm, errors, filters, run, submit, reset } = useTaskFilters(
    initialForm,
    toFilters,
    admin,
  );
  const [text, setText] = useState<{ title: string; body: string } | null>(null);
  const { copy, dialog: copyDialog } = useCopy();
  const status = useStatus();
  const address = status.data?.server_address?.trim() || window.location.origin;

  const list = useServerPages<TaskRow>({
    queryKey: ['creative-tasks', admin, filters, run],
    pageSize,
    fetchPage: (page, size) => fetchTasks(admin, filters, page, size),
  });

  const cell = (column: TaskColumn, row: TaskRow) => {
    switch (column) {
      case 'submitTime':
        return formatTimestamp(row.submit_time);
      case 'finishTime':
        return formatTimestamp(row.finish_time);
      case 'progress':
        return <ProgressRing progress={row.progress} failed={row.status === 'FAILURE'} />;
      case 'duration':
        return <SpentTag seconds={spentSeconds(row.submit_time, row.finish_time, 's')} />;
      case 'channel':
        return <ChannelTag id={row.channel_id} onCopy={copy} />;
      case 'platform':
        return row.platform in TASK_PLATFORMS ? (
          <Tag color={TASK_PLATFORMS[row.platform]}>{t(`platform.${row.platform}`)}</Tag>
        ) : (
          <Tag>{row.platform || t('platform.unknown')}</Tag>
        );
      case 'type':
        return row.action in TASK_ACTIONS ? (
          <Tag color={TASK_ACTIONS[row.action]}>{t(`action.${row.action}`)}</Tag>
        ) : (
          <Tag>{row.action || t('action.unknown')}</Tag>
        );
      case 'taskId':
        return row.task_id ? (
          <button
            type="button"
            title={t('record.open')}
            className="text-blue-600 hover:underline dark:text-blue-400"
            onClick={() => setText({ title: t('record.title'), body: JSON.stringify(row, null, 2) })}
          >
            {row.task_id}
          </button>
        ) : (
          <span className="text-gray-400">-</span>
        );
      case 'status': {
        const look = taskStatusLook(row.status);
        return <Tag color={look.color}>{t(`status.${look.name}`)}</Tag>;
      }
      case 'result': {
        const url = videoContentUrl(row, address);
        return url ? (
          <button
            type="button"
            title={t('result.videoHint')}
            className="text-blue-600 hover:underline dark:text-blue-400"
            onClick={() => void copy(url)}
          >
            {url}
          </button>
        ) : (
          <span className="text-gray-400">-</span>
        );
      }
      case 'failReason':
        return (
          <ClippedText
            text={row.fail_reason}
            onOpen={(body) => setText({ title: t('col.failReason'), body })}
          />
        );
    }
  };

  const columns: RowColumn<TaskRow>[] = visibleColumns(TASK_COLUMNS, admin).map((c) => ({
    id: c,
    header: t(`col.${c}`),
    cell: (row) => cell(c, row),
  }));

  return (
    <ListPage
      title={t('task.title')}
      filters={
        <TaskFilterForm
          value={form}
          errors={errors}
          admin={admin}
          loading={list.isFetching}
          onChange={setForm}
          onSubmit={submit}
          onReset={reset}
        />
      }
      table={
        <TaskLogTable
          columns={columns}
          list={list}
          rowKey={(row) => row.id}
          pageSize={pageSize}
          onPageSizeChange={setPageSize}
          empty={<TaskLogEmpty title={t('task.empty')} hint={t('task.emptyHint')} failed={list.isError} />}
        />
      }
    >
      <TextDialog title={text?.title ?? ''} text={text?.body ?? null} onClose={() => setText(null)} />
      {copyDialog}
    </ListPage>
  );
}

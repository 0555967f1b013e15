import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ListPage, type RowColumn, usePageSize } from '../../../components/data-table/index.ts';
import { Tag } from '../../../components/ui/index.ts';
import { useCopy } from '../../../components/ui/use-copy.tsx';
import { formatTimestamp } from '../../../lib/format.ts';
import { isAdmin, useSessionUser } from '../../../lib/session.ts';
import { useStatus } from '../../../lib/status.ts';
import { readStored, StorageKey } from '../../../lib/storage.ts';
import { type DrawingRow, fetchDrawings, type TaskFilters } from '../api/tasks.ts';
import {
  DRAWING_ACTIONS,
  DRAWING_COLUMNS,
  type DrawingColumn,
  defaultDrawingRange,
  drawingStatusLook,
  fromLocalInput,
  spentSeconds,
  submitCodeLook,
  toLocalInput,
  videoUrlsOf,
  visibleColumns,
} from '../rules.ts';
import { useServerPages } from '../use-server-pages.ts';
import { useTaskFilters } from '../use-task-filters.ts';
import type { TaskFilterInput } from '../validation.ts';
import {
  ChannelTag,
  ClippedText,
  ImagePreview,
  ProgressBar,
  SpentTag,
  TextDialog,
  VideoLinks,
} from './cells.tsx';
import { TaskFilterForm, TaskLogEmpty, TaskLogTable } from './task-log-parts.tsx';

function initialForm(): TaskFilterInput {
  const range = defaultDrawingRange();
  return { taskId: '', channel: '', start: toLocalInput(range.start), end: toLocalInput(range.end) };
}

/** Drawing task times are milliseconds on the wire. */
const toFilters = (form: TaskFilterInput): TaskFilters => ({
  taskId: form.taskId,
  channelId: form.channel,
  start: fromLocalInput(form.start),
  end: fromLocalInput(form.end),
});

/** The drawing (Midjourney) task log: administrators see every task and its channel, users their own. */
export function DrawingLogPage() {
  const { t } = useTranslation('tasks');
  const admin = isAdmin(useSessionUser());
  const status = useStatus();
  const [pageSize, setPageSize] = usePageSize('midjourney');
  const { form, setForm, errors, filters, run, submit, reset } = useTaskFilters(
    initialForm,
    toFilters,
    admin,
  );
  const [text, setText] = useState<{ title: string; body: string } | null>(null);
  const { copy, dialog: copyDialog } = useCopy();

  const list = useServerPages<DrawingRow>({
    queryKey: ['drawings', admin, filters, run],
    pageSize,
    fetchPage: (page, size) => fetchDrawings(admin, filters, page, size),
  });

  // the callback banner follows the stored flag, refreshed when the status loads
  const notifyEnabled = status.data
    ? Boolean(status.data.mj_notify_enabled)
    : readStored(StorageKey.MjNotifyEnabled) === 'true';

  const open = (title: string) => (body: string) => setText({ title, body });

  const cell = (column: DrawingColumn, row: DrawingRow) => {
    switch (column) {
      case 'submitTime':
        return formatTimestamp(row.submit_time / 1000);
      case 'duration':
        return <SpentTag seconds={spentSeconds(row.submit_time, row.finish_time, 'ms')} />;
      case 'channel':
        return <ChannelTag id={row.channel_id} onCopy={copy} />;
      case 'type':
        return row.action in DRAWING_ACTIONS ? (
          <Tag color={DRAWING_ACTIONS[row.action]}>{t(`action.${row.action}`)}</Tag>
        ) : (
          <Tag>{row.action || t('action.unknown')}</Tag>
        );
      case 'taskId':
        return row.mj_id || <span className="text-gray-400">-</span>;
      case 'submitResult': {
        const look = submitCodeLook(row.code);
        return <Tag color={look.color}>{t(`code.${look.name}`, { code: row.code })}</Tag>;
      }
      case 'status': {
        const look = drawingStatusLook(row.status);
        return <Tag color={look.color}>{t(`status.${look.name}`)}</Tag>;
      }
      case 'progress':
        return <ProgressBar progress={row.progress} failed={row.status === 'FAILURE'} />;
      case 'image': {
        // A video task may have a still image too; its videos are links beside it.
        const videos = videoUrlsOf(row.properties);
        if (videos.length === 0) return <ImagePreview url={row.image_url} alt={row.prompt || row.mj_id} />;
        return (
          <span className="flex items-center gap-2">
            {row.image_url ? <ImagePreview url={row.image_url} alt={row.prompt || row.mj_id} /> : null}
            <VideoLinks urls={videos} />
          </span>
        );
      }
      case 'prompt':
        return <ClippedText text={row.prompt} onOpen={open(t('col.prompt'))} />;
      case 'promptEn':
        return <ClippedText text={row.prompt_en} onOpen={open(t('col.promptEn'))} />;
      case 'failReason':
        return <ClippedText text={row.fail_reason} onOpen={open(t('col.failReason'))} />;
    }
  };

  const columns: RowColumn<DrawingRow>[] = visibleColumns(DRAWING_COLUMNS, admin).map((c) => ({
    id: c,
    header: t(`col.${c}`),
    cell: (row) => cell(c, row),
  }));

  return (
    <ListPage
      title={t('drawing.title')}
      intro={
        admin && !notifyEnabled ? (
          <div
            role="note"
            className="mb-3 rounded-md border border-blue-200 bg-blue-50 px-3 py-2 text-sm text-blue-800 dark:border-blue-900 dark:bg-blue-950/40 dark:text-blue-200"
          >
            {t('drawing.callbackOff')}{' '}
            <Link to="/setting" search={{ tab: 'operation' }} className="font-medium underline">
              {t('drawing.callbackLink')}
            </Link>
          </div>
        ) : undefined
      }
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
          empty={
            <TaskLogEmpty title={t('drawing.empty')} hint={t('drawing.emptyHint')} failed={list.isError} />
          }
        />
      }
    >
      <TextDialog title={text?.title ?? ''} text={text?.body ?? null} onClose={() => setText(null)} />
      {copyDialog}
    </ListPage>
  );
}

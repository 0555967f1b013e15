import { useState } from 'react';
import { useFilterDraft, useListSearch } from '../../components/data-table/index.ts';
import type { TaskFilters } from './api/tasks.ts';
import { taskLogSearch } from './search.ts';
import { type TaskFilterErrors, type TaskFilterInput, validateTaskFilters } from './validation.ts';

/**
 * The filter form of a task log and the filters applied, which live in the URL (search.ts). `submit` checks the
 * form and applies it, `reset` goes back to the defaults; when that leaves the URL as it was, `run` is bumped
 * instead, so Query and Reset fetch again even when nothing changed.
 */
export function useTaskFilters(
  initialForm: () => TaskFilterInput,
  toFilters: (form: TaskFilterInput) => TaskFilters,
  admin: boolean,
) {
  const url = useListSearch(taskLogSearch);
  // The default range is fixed when the page opens.
  const [initial] = useState(initialForm);
  const { taskId, channel, start, end } = url.search;
  const applied: TaskFilterInput = {
    taskId,
    channel,
    start: start || initial.start,
    end: end || initial.end,
  };
  const filter = useFilterDraft(applied);
  const [errors, setErrors] = useState<TaskFilterErrors>({});
  const [run, setRun] = useState(0);

  const applyOrRun = (next: TaskFilterInput) => {
    const stored = {
      ...next,
      start: next.start === initial.start ? '' : next.start,
      end: next.end === initial.end ? '' : next.end,
    };
    const unchanged = (Object.keys(stored) as (keyof TaskFilterInput)[]).every(
      (k) => stored[k] === url.search[k],
    );
    if (unchanged) setRun((n) => n + 1);
    else url.apply(stored);
  };
  const submit = () => {
    const found = validateTaskFilters(filter.draft, admin);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    applyOrRun(filter.draft);
  };
  const reset = () => {
    setErrors({});
    filter.discard();
    applyOrRun(initial);
  };
  return {
    form: filter.draft,
    setForm: (next: TaskFilterInput) => filter.set(next),
    errors,
    filters: toFilters(applied),
    run,
    submit,
    reset,
  };
}

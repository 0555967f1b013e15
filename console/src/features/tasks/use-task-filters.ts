import { useState } from 'react';
import type { TaskFilters } from './api/tasks.ts';
import { type TaskFilterErrors, type TaskFilterInput, validateTaskFilters } from './validation.ts';

/**
 * The filter form of a task log and the filters last applied. `submit` checks the form and applies it, `reset`
 * goes back to the defaults; both bump `run`, so Query and Reset fetch again even when nothing changed.
 */
export function useTaskFilters(
  initialForm: () => TaskFilterInput,
  toFilters: (form: TaskFilterInput) => TaskFilters,
  admin: boolean,
) {
  const [form, setForm] = useState(initialForm);
  const [errors, setErrors] = useState<TaskFilterErrors>({});
  const [filters, setFilters] = useState(() => toFilters(form));
  const [run, setRun] = useState(0);

  const submit = () => {
    const found = validateTaskFilters(form, admin);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setFilters(toFilters(form));
    setRun((n) => n + 1);
  };
  const reset = () => {
    const fresh = initialForm();
    setForm(fresh);
    setErrors({});
    setFilters(toFilters(fresh));
    setRun((n) => n + 1);
  };
  return { form, setForm, errors, filters, run, submit, reset };
}

import { describe, expect, it } from 'vitest';
import { acceptedTaskId, readFetchAnswer, sunoStatusOf } from './wire.ts';

describe('Suno answers', () => {
  it('takes the task id of an accepted submit only', () => {
    expect(acceptedTaskId(200, { code: 'success', message: '', data: 'task-1' })).toBe('task-1');
    expect(acceptedTaskId(200, { code: 'error', message: 'busy', data: null })).toBeUndefined();
    expect(acceptedTaskId(200, { code: 'success', data: '' })).toBeUndefined();
    expect(acceptedTaskId(500, { code: 'success', data: 'task-1' })).toBeUndefined();
  });

  it('reads the tasks of a fetch answer and drops entries without an id', () => {
    expect(
      readFetchAnswer({
        code: 'success',
        data: [{ task_id: 'a', status: 'SUCCESS' }, { status: 'X' }, null],
      }),
    ).toEqual([{ task_id: 'a', status: 'SUCCESS' }]);
    expect(readFetchAnswer({ code: 'error', data: [] })).toBeUndefined();
    expect(['QUEUED', 'FAILURE', 'odd', undefined].map(sunoStatusOf)).toEqual([
      'QUEUED',
      'FAILURE',
      'UNKNOWN',
      'UNKNOWN',
    ]);
  });
});

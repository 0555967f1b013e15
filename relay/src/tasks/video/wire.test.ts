import { TaskStatus } from '@turnpike/core/domain/tasks';
import { describe, expect, it } from 'vitest';
import {
  clientStatusOf,
  failureOf,
  isVideoSize,
  parseSeconds,
  progressText,
  readUpstreamVideo,
  taskStatusOf,
} from './wire.ts';

describe('OpenAI video wire format', () => {
  it('maps job states to task states and back', () => {
    for (const status of ['queued', 'in_progress', 'completed', 'failed'] as const)
      expect(clientStatusOf(taskStatusOf(status))).toBe(status);
    expect(taskStatusOf('something new')).toBe(TaskStatus.Unknown);
    expect(clientStatusOf(TaskStatus.Submitted)).toBe('queued');
  });

  it('reads lengths and sizes a client may ask for, and refuses the rest', () => {
    expect(parseSeconds('8')).toBe(8);
    expect(parseSeconds(12)).toBe(12);
    for (const bad of ['0', '61', '4.5', 'four', '', -4, 4.5, null])
      expect(parseSeconds(bad)).toBeUndefined();
    expect(isVideoSize('1792x1024')).toBe(true);
    for (const bad of ['1792X1024', '0x10', '1792x', 'big', 1792]) expect(isVideoSize(bad)).toBe(false);
  });

  it('reads an upstream job, its progress and its failure', () => {
    expect(readUpstreamVideo({ id: 'video_1', status: 'queued' })).toMatchObject({ id: 'video_1' });
    expect(readUpstreamVideo({ error: { message: 'nope' } })).toBeUndefined();
    expect(progressText(41.6, TaskStatus.InProgress)).toBe('42%');
    expect(progressText(undefined, TaskStatus.Success)).toBe('100%');
    expect(progressText('x', TaskStatus.InProgress)).toBeUndefined();
    expect(
      failureOf({ id: 'v', status: 'failed', error: { code: 'moderation_blocked', message: 'blocked' } }),
    ).toBe('moderation_blocked: blocked');
    expect(failureOf({ id: 'v', status: 'failed', error: null })).toBe('the video job failed upstream');
  });
});

import { describe, expect, it } from 'vitest';
import {
  DRAWING_COLUMNS,
  defaultDrawingRange,
  defaultTaskRange,
  drawingStatusLook,
  parseProgress,
  spentColor,
  spentSeconds,
  submitCodeLook,
  TASK_COLUMNS,
  taskStatusLook,
  videoUrlsOf,
  visibleColumns,
} from './rules.ts';
import { validateTaskFilters } from './validation.ts';

describe('task log rules', () => {
  it('computes time spent in seconds from milliseconds or seconds, and none while unfinished', () => {
    expect(spentSeconds(10_000, 75_500, 'ms')).toBe(65.5);
    expect(spentSeconds(100, 190, 's')).toBe(90);
    expect(spentSeconds(10_000, 0, 'ms')).toBeNull();
    expect(spentSeconds(0, 5, 's')).toBeNull();
  });

  it('colours time spent green up to 60 s and red above', () => {
    expect([spentColor(0), spentColor(60), spentColor(60.1), spentColor(600)]).toEqual([
      'green',
      'green',
      'red',
      'red',
    ]);
  });

  it('reads numeric progress and leaves other texts alone', () => {
    expect(parseProgress('40%')).toBe(40);
    expect(parseProgress('100%')).toBe(100);
    expect(parseProgress('7')).toBe(7);
    expect(parseProgress('250%')).toBe(100);
    expect(parseProgress('')).toBeNull();
    expect(parseProgress('waiting')).toBeNull();
  });

  it('shows statuses outside the known sets as unknown', () => {
    expect(drawingStatusLook('MODAL')).toEqual({ name: 'modal', color: 'orange' });
    expect(drawingStatusLook('QUEUED').name).toBe('unknown');
    expect(taskStatusLook('QUEUED').name).toBe('queued');
    expect(taskStatusLook('').name).toBe('submitting');
    expect(taskStatusLook('WHATEVER').name).toBe('unknown');
    expect(submitCodeLook(1)).toEqual({ name: 'submitted', color: 'green' });
    expect(submitCodeLook(4)).toEqual({ name: 'failed', color: 'red' });
  });

  it('defaults the drawing log to 30 days back and 1 hour ahead, the task log to today with no end', () => {
    const now = Date.UTC(2026, 2, 15, 12, 0, 0);
    expect(defaultDrawingRange(now)).toEqual({ start: now - 30 * 86_400_000, end: now + 3_600_000 });
    const task = defaultTaskRange(new Date(2026, 2, 15, 12, 34, 56));
    expect(task).toEqual({ start: new Date(2026, 2, 15, 0, 0, 0).getTime(), end: 0 });
  });

  it('keeps the channel column for administrators only', () => {
    expect(visibleColumns(DRAWING_COLUMNS, true)).toContain('channel');
    expect(visibleColumns(DRAWING_COLUMNS, false)).not.toContain('channel');
    expect(visibleColumns(TASK_COLUMNS, false)).toHaveLength(TASK_COLUMNS.length - 1);
  });

  it('validates the filters: end before start, a non-numeric channel id (admins), an overlong task id', () => {
    const ok = { start: '2026-01-01T00:00', end: '2026-01-02T00:00', channel: '', taskId: '' };
    expect(validateTaskFilters(ok, true)).toEqual({});
    expect(validateTaskFilters({ ...ok, end: '2025-12-31T23:59' }, false)).toEqual({
      end: 'validation.endBeforeStart',
    });
    // an empty end is no bound, never "before the start"
    expect(validateTaskFilters({ ...ok, end: '' }, false)).toEqual({});
    expect(validateTaskFilters({ ...ok, channel: '3a' }, true)).toEqual({ channel: 'validation.channelId' });
    expect(validateTaskFilters({ ...ok, channel: ' 12 ' }, true)).toEqual({});
    // users have no channel filter, so it is not checked
    expect(validateTaskFilters({ ...ok, channel: '3a' }, false)).toEqual({});
    expect(validateTaskFilters({ ...ok, taskId: 'x'.repeat(192) }, false)).toEqual({
      taskId: 'validation.taskIdLength',
    });
  });

  it("reads a drawing's video links from its properties: videoUrl and videoUrls, http(s) only, each once", () => {
    const properties = JSON.stringify({
      finalPrompt: 'waves',
      videoUrl: 'https://cdn.example/v/1.mp4',
      videoUrls: [
        { url: 'https://cdn.example/v/1.mp4' },
        { url: 'https://cdn.example/v/2.mp4' },
        'http://x/3.mp4',
      ],
    });
    expect(videoUrlsOf(properties)).toEqual([
      'https://cdn.example/v/1.mp4',
      'https://cdn.example/v/2.mp4',
      'http://x/3.mp4',
    ]);
    expect(videoUrlsOf(JSON.stringify({ videoUrls: [{ url: 'javascript:alert(1)' }, null, 7] }))).toEqual([]);
    expect(videoUrlsOf(JSON.stringify({ urls: ['https://cdn.example/upload.png'] }))).toEqual([]);
    expect(videoUrlsOf('')).toEqual([]);
    expect(videoUrlsOf('{not json')).toEqual([]);
  });
});

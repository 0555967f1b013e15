import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MjAction } from '@turnpike/core/domain/midjourney-actions';
import { describe, expect, it } from 'vitest';
import {
  DRAWING_ACTIONS,
  DRAWING_COLUMNS,
  DRAWING_STATUSES,
  SUBMIT_CODES,
  submitCodeLook,
  TASK_ACTIONS,
  TASK_COLUMNS,
  TASK_PLATFORMS,
  TASK_STATUSES,
} from './rules.ts';
import { validateTaskFilters } from './validation.ts';

const localesDir = path.resolve(import.meta.dirname, '../../locales');
const table = (language: string): Record<string, string> =>
  JSON.parse(readFileSync(path.join(localesDir, language, 'tasks.json'), 'utf8'));

const MJ_ACTIONS = Object.values(MjAction);

describe('task log texts built from ids', () => {
  it('exist in Chinese and English for every column, status, submit code, action, platform and error', () => {
    const errors = validateTaskFilters(
      { start: '2026-01-02T00:00', end: '2026-01-01T00:00', channel: 'x', taskId: 'y'.repeat(500) },
      true,
    );
    expect(Object.keys(errors)).toEqual(['end', 'channel', 'taskId']);
    const keys = [
      ...[...DRAWING_COLUMNS, ...TASK_COLUMNS].map((c) => `col.${c}`),
      ...[...Object.values(DRAWING_STATUSES), ...Object.values(TASK_STATUSES)].map((s) => `status.${s.name}`),
      'status.unknown',
      ...[...Object.values(SUBMIT_CODES), submitCodeLook(-1)].map((s) => `code.${s.name}`),
      ...[...Object.keys(DRAWING_ACTIONS), ...Object.keys(TASK_ACTIONS), 'unknown'].map((a) => `action.${a}`),
      ...[...Object.keys(TASK_PLATFORMS), 'unknown'].map((p) => `platform.${p}`),
      ...Object.values(errors),
    ];
    const absent = ['zh', 'en'].flatMap((language) => {
      const texts = table(language);
      return keys.filter((key) => !texts[key]).map((key) => `${language}: ${key}`);
    });
    expect(absent).toEqual([]);
  });

  it('label every drawing action the relay can store, in Chinese and English, each with its colour', () => {
    // MjAction is the set relay/src/tasks/midjourney/wire.ts plans every submit as.
    expect(MJ_ACTIONS).toEqual(expect.arrayContaining(['VIDEO', 'EDITS', 'MODAL', 'UPLOAD', 'SWAP_FACE']));
    expect(MJ_ACTIONS.filter((action) => !(action in DRAWING_ACTIONS))).toEqual([]);
    const absent = ['zh', 'en'].flatMap((language) => {
      const texts = table(language);
      return MJ_ACTIONS.filter((action) => !texts[`action.${action}`]).map((a) => `${language}: ${a}`);
    });
    expect(absent).toEqual([]);
    // a label is a translation, not the id shown as sent
    expect(table('en')['action.VIDEO']).not.toBe(table('zh')['action.VIDEO']);
  });
});

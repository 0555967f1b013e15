import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROVIDER_TYPES } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import { menuGroups } from '../components/layout/side-menu.tsx';
import {
  PROVIDERS_NS,
  providerFieldKey,
  providerKeyFormatKey,
  providerKeyPlaceholderKey,
} from '../features/channels/provider-texts.ts';
import { CHANNEL_COLUMNS, TYPE_FORM_HINTS } from '../features/channels/validation.ts';
import { LOG_COLUMNS, LOG_TYPE_NAMES } from '../features/logs/rules.ts';
import { validateLogFilters } from '../features/logs/validation.ts';
import {
  modelSections,
  operationSections,
  rateLimitFields,
  ratioFields,
} from '../features/settings/components/operation-settings.tsx';
import {
  generalFields,
  githubFields,
  linuxdoFields,
  loginFields,
  oidcFields,
  paymentFields,
  smtpFields,
  telegramFields,
  turnstileFields,
  wechatFields,
  workerFields,
} from '../features/settings/components/system-settings.tsx';
import { SETTINGS_TABS } from '../features/settings/tabs.ts';
import {
  EXPIRY_PRESETS,
  parseTokenForm,
  type TokenForm,
  TokenStatus,
  tokenStatusName,
} from '../features/tokens/validation.ts';

const localesDir = import.meta.dirname;
const srcDir = path.resolve(localesDir, '..');
type Table = Record<string, string>;
const load = (language: string): Record<string, Table> =>
  Object.fromEntries(
    readdirSync(path.join(localesDir, language))
      .filter((f) => f.endsWith('.json'))
      .map((f) => [
        f.replace(/\.json$/, ''),
        JSON.parse(readFileSync(path.join(localesDir, language, f), 'utf8')),
      ]),
  );
const tables = { zh: load('zh'), en: load('en') };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory())
      return entry === 'testing' || entry === 'locales' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry) && !entry.endsWith('.gen.ts') ? [full] : [];
  });
}

/**
 * The namespaces a file asks for (`useTranslation('users')`) or is handed (`t: TFunction<'logs'>`), plus the default
 * one.
 */
function namespacesOf(source: string): string[] {
  const found = new Set(['common']);
  for (const m of source.matchAll(/(?:useTranslation\(|TFunction<)\s*'([\w-]+)'/g)) if (m[1]) found.add(m[1]);
  return [...found];
}

/** Literal keys passed to t()/tp()/i18next.t(): `t('a.b')` or `t('ns:a.b')`. Template keys are checked below. */
function literalKeys(source: string): string[] {
  return [...source.matchAll(/(?:(?<![\w.])tp?|i18next\.t)\(\s*'([\w.:-]+)'/g)]
    .map((m) => m[1] ?? '')
    .filter(Boolean);
}

function missing(language: 'zh' | 'en', key: string, namespaces: string[]): boolean {
  const [ns, bare] = key.includes(':') ? (key.split(':') as [string, string]) : [null, key];
  const candidates = ns ? [ns] : namespaces;
  return !candidates.some((n) => tables[language][n]?.[bare] !== undefined);
}

describe('every text the console shows has a translation', () => {
  const files = sourceFiles(srcDir);

  it.each(files.map((f) => [path.relative(srcDir, f), f]))(
    '%s uses only keys that exist in zh and en',
    (_name, file) => {
      const source = readFileSync(file, 'utf8');
      const namespaces = namespacesOf(source);
      const absent = literalKeys(source).flatMap((key) =>
        (['zh', 'en'] as const).filter((lng) => missing(lng, key, namespaces)).map((lng) => `${lng}: ${key}`),
      );
      expect(absent).toEqual([]);
    },
  );

  it('every settings tab, section and option field has a label in both languages', () => {
    const sections = [...operationSections, ...modelSections].map((s) => s.id);
    const fields = [
      ...operationSections.flatMap((s) => s.fields),
      ...modelSections.flatMap((s) => s.fields),
      ...ratioFields,
      ...rateLimitFields,
      ...generalFields,
      ...workerFields,
      ...paymentFields,
      ...loginFields,
      ...smtpFields,
      ...oidcFields,
      ...githubFields,
      ...linuxdoFields,
      ...wechatFields,
      ...telegramFields,
      ...turnstileFields,
    ];
    const keys = [
      ...SETTINGS_TABS.map((tab) => `tab.${tab}`),
      ...sections.map((id) => `section.${id}`),
      ...fields.map((f) => f.label ?? `field.${f.key}`),
      ...fields.flatMap((f) => (f.hint ? [f.hint] : [])),
      ...fields.flatMap((f) => (f.confirmOff ? [f.confirmOff] : [])),
      ...fields.flatMap((f) => (f.options ?? []).map((o) => o.label)),
    ];
    const absent = (['zh', 'en'] as const).flatMap((lng) =>
      keys.filter((k) => tables[lng].settings?.[k] === undefined).map((k) => `${lng}: ${k}`),
    );
    expect(absent).toEqual([]);
  });

  it('every side menu item and group has a label in both languages', () => {
    const keys = menuGroups().flatMap((g) => [
      ...(g.label ? [g.label] : []),
      ...g.items.filter((i) => !i.literal).map((i) => i.label),
    ]);
    const absent = (['zh', 'en'] as const).flatMap((lng) =>
      keys.filter((k) => tables[lng].common?.[k] === undefined).map((k) => `${lng}: ${k}`),
    );
    expect(absent).toEqual([]);
  });

  it('user management has a label, a question and a result for every action, role and status', () => {
    const actions = ['promote', 'demote', 'disable', 'enable', 'delete'];
    const keys = [
      ...actions.flatMap((a) => [`action.${a}`, `confirm.${a}`, `done.${a}`]),
      'action.edit',
      ...['common', 'admin', 'root', 'unknown'].map((r) => `role.${r}`),
      ...['active', 'banned', 'other', 'unknown', 'deregistered'].map((s) => `status.${s}`),
    ];
    const absent = (['zh', 'en'] as const).flatMap((lng) =>
      keys.filter((k) => tables[lng].users?.[k] === undefined).map((k) => `${lng}: ${k}`),
    );
    expect(absent).toEqual([]);
  });

  it.each(['channels', 'tokens', 'logs', 'redemptions', 'wallet', 'tasks', 'dashboard'])(
    '%s: message keys handed around as values (rules, handlers) have texts in both languages',
    (namespace) => {
      // e.g. checkChannelForm answers 'error.noModels' and the page later calls t(problem)
      const keys = sourceFiles(path.join(srcDir, 'features', namespace)).flatMap((file) => [
        ...readFileSync(file, 'utf8').matchAll(/'((?:error|done|validation)\.[A-Za-z]+)'/g),
      ]);
      const absent = [...new Set(keys.map((m) => m[1] ?? ''))].flatMap((key) =>
        (['zh', 'en'] as const)
          .filter((lng) => tables[lng][namespace]?.[key] === undefined)
          .map((lng) => `${lng}: ${key}`),
      );
      expect(keys.length).toBeGreaterThan(0);
      expect(absent).toEqual([]);
    },
  );

  it('channel, token and log keys built from ids (columns, statuses, presets, types, errors) exist', () => {
    const tokenForm: TokenForm = {
      name: 'n',
      remainQuota: '0',
      unlimitedQuota: false,
      expiry: '',
      count: '1',
      modelLimitsEnabled: false,
      modelLimits: [],
      allowIps: '',
      group: '',
      limits: { rpm: '', tpm: '', concurrency: '' },
    };
    const tokenErrors = [
      parseTokenForm({ ...tokenForm, name: ' ' }, false),
      parseTokenForm({ ...tokenForm, expiry: 'someday' }, false),
      parseTokenForm({ ...tokenForm, remainQuota: '-5' }, false),
      parseTokenForm({ ...tokenForm, count: '0' }, false),
      parseTokenForm({ ...tokenForm, limits: { rpm: '-1', tpm: '', concurrency: '' } }, false),
    ].flatMap((r) => (r.ok ? [] : [`error.${r.error}`]));
    expect(tokenErrors).toHaveLength(5);
    const tokenStatuses = [...Object.values(TokenStatus), 0].flatMap((s) => [
      tokenStatusName(s, false),
      tokenStatusName(s, true),
    ]);
    const logErrors = validateLogFilters(
      { start: '2025-01-02T00:00', end: '2025-01-01T00:00', channel: 'abc' },
      true,
    );
    const wanted: Record<string, string[]> = {
      channels: [
        ...CHANNEL_COLUMNS.map((c) => `col.${c}`),
        ...Object.values(TYPE_FORM_HINTS).flatMap((h) =>
          [h.baseUrlLabel, h.baseUrlHint, h.otherLabel, h.otherHint].filter((k): k is string => Boolean(k)),
        ),
      ],
      tokens: [
        ...tokenErrors,
        ...tokenStatuses.map((s) => `status.${s}`),
        ...Object.keys(EXPIRY_PRESETS).map((p) => `expiry.${p}`),
      ],
      logs: [
        ...LOG_COLUMNS.map((c) => `col.${c}`),
        ...[...Object.values(LOG_TYPE_NAMES), 'all', 'unknown'].map((n) => `type.${n}`),
        ...Object.values(logErrors).flatMap((key) => (key ? [key] : [])),
      ],
    };
    expect(Object.keys(logErrors)).toEqual(['end', 'channel']);
    const absent = Object.entries(wanted).flatMap(([ns, keys]) =>
      (['zh', 'en'] as const).flatMap((lng) =>
        keys.filter((k) => tables[lng][ns]?.[k] === undefined).map((k) => `${lng}: ${ns}:${k}`),
      ),
    );
    expect(absent).toEqual([]);
  });

  it('Chinese texts are Chinese: no zh entry is left as the English text', () => {
    const copied = Object.entries(tables.zh).flatMap(([ns, table]) =>
      Object.entries(table)
        .filter(([key, text]) => /[a-z]{4,}\s+[a-z]{3,}/i.test(text) && text === tables.en[ns]?.[key])
        .map(([key]) => `${ns}:${key}`),
    );
    expect(copied).toEqual([]);
  });

  it('every catalogue provider type has its key format, key placeholder and extra-field labels in both languages', () => {
    const keys = PROVIDER_TYPES.flatMap((p) => [
      providerKeyFormatKey(p.value),
      providerKeyPlaceholderKey(p.value),
      ...p.extraFields.map((x) => providerFieldKey(p.value, x.field)),
    ]);
    expect(keys.length).toBeGreaterThan(0);
    const absent = (['zh', 'en'] as const).flatMap((lng) =>
      keys.filter((k) => tables[lng][PROVIDERS_NS]?.[k] === undefined).map((k) => `${lng}: ${k}`),
    );
    expect(absent).toEqual([]);
  });
});

/**
 * The settings' budget windows per group (docs/adr/0043): the windows every user of a group has, each user their
 * own (`GroupQuotaWindows`), and the time zone day, week and month windows reset in (`QuotaWindowTimeZone`).
 */

import { useQueryClient } from '@tanstack/react-query';
import { isKnownTimeZone } from '@turnpike/core/domain/time-zone';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Select } from '../../../components/ui/index.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import { type OptionValues, saveFailureText, saveOptions } from '../../settings/api/options.ts';
import {
  groupsWithoutWindows,
  groupWindowRows,
  groupWindowsOption,
  sameJson,
  WINDOW_ERROR_KEYS,
  type WindowRow,
} from '../rules.ts';
import { QuotaWindowEditor, type WindowFieldError } from './window-editor.tsx';

export function GroupQuotaWindows({ values }: { values: OptionValues }) {
  const { t } = useTranslation('quota-windows');
  const { t: ts } = useTranslation('settings');
  const queryClient = useQueryClient();
  const display = useQuotaDisplay();
  const [zone, setZone] = useState(values.QuotaWindowTimeZone ?? 'UTC');
  const [zoneError, setZoneError] = useState<string | null>(null);
  const [groups, setGroups] = useState(() => groupWindowRows(values, display));
  const [wrong, setWrong] = useState<(WindowFieldError & { group: string }) | null>(null);
  const offered = groupsWithoutWindows(
    values,
    groups.map(([group]) => group),
  );
  const [picked, setPicked] = useState('');
  const [saving, setSaving] = useState(false);
  // An administrator is listed only the options they may change; without these there is nothing to edit here.
  if (!Object.hasOwn(values, 'GroupQuotaWindows') || !Object.hasOwn(values, 'QuotaWindowTimeZone'))
    return null;

  const setRows = (group: string, rows: WindowRow[]) => {
    setGroups((all) => all.map((entry) => (entry[0] === group ? [group, rows] : entry)));
    setWrong(null);
  };
  const addGroup = () => {
    const group = picked || offered[0];
    if (!group) return;
    setGroups((all) => [...all, [group, []] as [string, WindowRow[]]].sort(([a], [b]) => a.localeCompare(b)));
    setPicked('');
  };

  const save = async () => {
    const timeZone = zone.trim();
    if (!isKnownTimeZone(timeZone)) {
      setZoneError(t('group.timeZoneInvalid'));
      toast.error(t('group.timeZoneInvalid'));
      return;
    }
    const option = groupWindowsOption(groups, display);
    if (!option.ok) {
      setWrong({ ...option, message: t(WINDOW_ERROR_KEYS[option.error]) });
      toast.error(t('group.fix', { group: option.group }));
      return;
    }
    const changed: [string, string][] = [];
    if (timeZone !== values.QuotaWindowTimeZone) changed.push(['QuotaWindowTimeZone', timeZone]);
    if (!sameJson(values.GroupQuotaWindows, option.text)) changed.push(['GroupQuotaWindows', option.text]);
    if (changed.length === 0) {
      toast.info(ts('save.nothingChanged'));
      return;
    }
    setSaving(true);
    const result = await saveOptions(changed);
    setSaving(false);
    if (result.failed.length === 0) toast.success(ts('save.saved'));
    else toast.error(saveFailureText(result, ts));
    await queryClient.invalidateQueries({ queryKey: ['options'] });
  };

  return (
    <section
      aria-label={t('group.title')}
      className="rounded-lg border border-gray-200 bg-white p-4 dark:border-gray-700 dark:bg-gray-900"
    >
      <h2 className="text-base font-semibold">{t('group.title')}</h2>
      <p className="mt-1 text-sm text-gray-500 dark:text-gray-400">{t('group.description')}</p>
      <div className="mt-3 flex flex-col gap-4">
        <Input
          label={t('group.timeZone')}
          value={zone}
          error={zoneError}
          hint={t('group.timeZoneHint')}
          onChange={(e) => {
            setZone(e.target.value);
            setZoneError(null);
          }}
        />
        {groups.length === 0 ? (
          <p className="text-sm text-gray-600 dark:text-gray-300">{t('group.empty')}</p>
        ) : null}
        {groups.map(([group, rows]) => (
          <div key={group} data-testid={`group-windows-${group}`}>
            <QuotaWindowEditor
              title={t('group.of', { group })}
              rows={rows}
              onChange={(next) => setRows(group, next)}
              display={display}
              error={wrong?.group === group ? wrong : null}
            />
          </div>
        ))}
        {offered.length > 0 ? (
          <div className="flex items-end gap-2">
            <div className="w-48">
              <Select
                label={t('group.pick')}
                value={picked || offered[0]}
                options={offered.map((group) => ({ value: group, label: group }))}
                onChange={(e) => setPicked(e.target.value)}
              />
            </div>
            <Button variant="secondary" onClick={addGroup}>
              {t('group.add')}
            </Button>
          </div>
        ) : null}
      </div>
      <div className="mt-3">
        <Button onClick={() => void save()} loading={saving}>
          {t('group.save')}
        </Button>
      </div>
    </section>
  );
}

import {
  CreateMode,
  type CreateModeValue,
  KeyMode,
  type KeyModeValue,
  MultiKeyMode,
  type MultiKeyModeValue,
} from '@turnpike/core/channels/multi-key';
import { useTranslation } from 'react-i18next';
import { Select } from '../../../components/ui/index.ts';

/** How the key field is read: on create, one channel per key or one multi-key channel; on edit, add or replace. */
export interface KeyOptions {
  readonly mode: CreateModeValue;
  readonly multiKeyMode: MultiKeyModeValue;
  readonly keyMode: KeyModeValue;
}

export const DEFAULT_KEY_OPTIONS: KeyOptions = {
  mode: CreateMode.Batch,
  multiKeyMode: MultiKeyMode.Random,
  keyMode: KeyMode.Append,
};

/** The request fields the key options add (the reference's `mode`, `multi_key_mode` and `key_mode`). */
export function keyRequestFields(
  options: KeyOptions,
  context: { isEdit: boolean; isMultiKey: boolean; hasKey: boolean },
): { mode?: CreateModeValue; multi_key_mode?: MultiKeyModeValue; key_mode?: KeyModeValue } {
  if (!context.isEdit)
    return options.mode === CreateMode.MultiToSingle
      ? { mode: options.mode, multi_key_mode: options.multiKeyMode }
      : { mode: options.mode };
  return {
    ...(context.hasKey ? { key_mode: options.keyMode } : {}),
    ...(context.isMultiKey ? { multi_key_mode: options.multiKeyMode } : {}),
  };
}

/** The choices beside the key field. */
export function KeyModeFields({
  isEdit,
  isMultiKey,
  options,
  onChange,
}: {
  isEdit: boolean;
  isMultiKey: boolean;
  options: KeyOptions;
  onChange: (next: KeyOptions) => void;
}) {
  const { t } = useTranslation('channels');
  const selection = (
    <Select
      label={t('keys.selection')}
      value={options.multiKeyMode}
      hint={t('keys.selectionHint')}
      onChange={(e) => onChange({ ...options, multiKeyMode: e.target.value as MultiKeyModeValue })}
      options={[
        { value: MultiKeyMode.Random, label: t('keys.selectionRandom') },
        { value: MultiKeyMode.Polling, label: t('keys.selectionPolling') },
      ]}
    />
  );
  if (!isEdit)
    return (
      <div className="grid gap-3 sm:grid-cols-2">
        <Select
          label={t('keys.createMode')}
          value={options.mode}
          onChange={(e) => onChange({ ...options, mode: e.target.value as CreateModeValue })}
          options={[
            { value: CreateMode.Batch, label: t('keys.modeBatch') },
            { value: CreateMode.MultiToSingle, label: t('keys.modeMulti') },
            { value: CreateMode.Single, label: t('keys.modeSingle') },
          ]}
        />
        {options.mode === CreateMode.MultiToSingle ? selection : null}
      </div>
    );
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <Select
        label={t('keys.editMode')}
        value={options.keyMode}
        hint={isMultiKey ? undefined : t('keys.appendMakesMulti')}
        onChange={(e) => onChange({ ...options, keyMode: e.target.value as KeyModeValue })}
        options={[
          { value: KeyMode.Append, label: t('keys.keyAppend') },
          { value: KeyMode.Replace, label: t('keys.keyReplace') },
        ]}
      />
      {isMultiKey ? selection : null}
    </div>
  );
}

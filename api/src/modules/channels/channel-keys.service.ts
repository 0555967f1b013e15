/**
 * `POST /api/channel/multi_key/manage` (the reference's actions): the keys of a multi-key channel, masked, and
 * enabling, disabling or deleting one or all of them (docs/adr/0027). Keys never leave the server: the listing
 * shows a masked preview. A Kubernetes-owned channel's keys may be enabled or disabled (runtime state, kept by the
 * operator) but not deleted (its Secret lists them).
 */
import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { changeKeyRing, type KeyRingChange } from '@turnpike/core/channels/key-ring-writes';
import {
  deleteKeys,
  type KeyRing,
  type KeyState,
  KeyStatus,
  maskKey,
  setKeyStates,
} from '@turnpike/core/channels/multi-key';
import { KeyAction, type KeyStatusPage, type ManageKeys } from '@turnpike/core/contracts/channels';
import type { Channel } from '@turnpike/core/db/schema/channels';
import { AppError } from '@turnpike/core/errors';
import { managedByKubernetes, sourceOfRow } from '@turnpike/core/ownership/source';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import type { AppDeps } from '../../deps.ts';

const NOT_FOUND = 'channel not found';

export type ManageKeysResult = { data: KeyStatusPage | undefined; message: string };

function statusPage(ring: KeyRing, input: ManageKeys): KeyStatusPage {
  const all = ring.keys.map((key, index) => {
    const state = ring.states[index] as KeyState;
    return {
      index,
      status: state.status,
      disabled_reason: state.reason ?? '',
      disabled_time: state.time ?? 0,
      key_preview: maskKey(key),
    };
  });
  const shown = input.status === undefined ? all : all.filter((k) => k.status === input.status);
  const count = (status: number) => all.filter((k) => k.status === status).length;
  return {
    keys: shown.slice((input.page - 1) * input.page_size, input.page * input.page_size),
    total: shown.length,
    page: input.page,
    page_size: input.page_size,
    total_pages: Math.max(1, Math.ceil(shown.length / input.page_size)),
    enabled_count: count(KeyStatus.Enabled),
    manual_disabled_count: count(KeyStatus.Disabled),
    auto_disabled_count: count(KeyStatus.AutoDisabled),
    multi_key_mode: ring.mode,
  };
}

export function createChannelKeyService(deps: AppDeps) {
  const box = createChannelKeyBox(deps.config.cryptoSecret);

  const refuseDeleteIfManaged = (row: Channel) => {
    const source = sourceOfRow(row);
    if (source) throw managedByKubernetes(`the keys of channel #${row.id} (${row.name})`, source);
  };

  /** The change an action makes, with the message it answers. */
  function changeFor(input: ManageKeys, ring: KeyRing, row: Channel): KeyRingChange<string> {
    if (!ring.isMultiKey) throw new AppError('VALIDATION_FAILED', 'this channel is not a multi-key channel');
    const index = input.key_index ?? -1;
    const needsKey = [KeyAction.EnableKey, KeyAction.DisableKey, KeyAction.DeleteKey] as string[];
    if (needsKey.includes(input.action) && (index < 0 || index >= ring.keys.length))
      throw new AppError('VALIDATION_FAILED', `key_index must be between 0 and ${ring.keys.length - 1}`);
    const disabledByHand: KeyState = {
      status: KeyStatus.Disabled,
      reason: 'disabled by hand',
      time: nowSeconds(),
    };
    const enabled: KeyState = { status: KeyStatus.Enabled };
    const all = ring.keys.map((_, i) => i);
    switch (input.action) {
      case KeyAction.EnableKey:
        return { ring: setKeyStates(ring, [index], enabled), result: `key ${index} enabled` };
      case KeyAction.DisableKey:
        if (ring.states[index]?.status !== KeyStatus.Enabled)
          return { ring: undefined, result: 'already disabled' };
        return { ring: setKeyStates(ring, [index], disabledByHand), result: `key ${index} disabled` };
      case KeyAction.EnableAllKeys:
        return { ring: setKeyStates(ring, all, enabled), result: `${ring.keys.length} keys enabled` };
      case KeyAction.DisableAllKeys: {
        const on = all.filter((i) => ring.states[i]?.status === KeyStatus.Enabled);
        return { ring: setKeyStates(ring, on, disabledByHand), result: `${on.length} keys disabled` };
      }
      case KeyAction.DeleteKey: {
        refuseDeleteIfManaged(row);
        if (ring.keys.length === 1)
          throw new AppError(
            'VALIDATION_FAILED',
            'the last key of a channel cannot be deleted; delete the channel',
          );
        return { ring: deleteKeys(ring, (_, i) => i === index), result: `key ${index} deleted` };
      }
      case KeyAction.DeleteDisabledKeys: {
        refuseDeleteIfManaged(row);
        const next = deleteKeys(ring, (state) => state.status !== KeyStatus.Enabled);
        const gone = ring.keys.length - next.keys.length;
        if (gone === 0) return { ring: undefined, result: 'no disabled key to delete' };
        if (next.keys.length === 0)
          throw new AppError(
            'VALIDATION_FAILED',
            'every key of this channel is disabled; enable one first or delete the channel',
          );
        return { ring: next, result: `${gone} disabled keys deleted` };
      }
      default:
        return { ring: undefined, result: '' };
    }
  }

  return {
    async manage(input: ManageKeys): Promise<ManageKeysResult> {
      const outcome = await changeKeyRing(
        { db: deps.db, bus: deps.bus, box },
        input.channel_id,
        (ring, row) =>
          input.action === KeyAction.GetKeyStatus
            ? { ring: undefined, result: '' }
            : changeFor(input, ring, row),
      );
      if (!outcome) throw new AppError('NOT_FOUND', NOT_FOUND);
      if (input.action === KeyAction.GetKeyStatus) {
        if (!outcome.ring.isMultiKey)
          throw new AppError('VALIDATION_FAILED', 'this channel is not a multi-key channel');
        return { data: statusPage(outcome.ring, input), message: '' };
      }
      return { data: undefined, message: outcome.result };
    },
  };
}

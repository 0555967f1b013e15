/**
 * The channel drawer: loads the channel being edited, then shows the form in its sections (basics, models and
 * mapping, routing, limits, advanced) over one state (channel-form.schema.ts) and submits it.
 */
import { useQuery } from '@tanstack/react-query';
import type { ResourceSource } from '@turnpike/core/ownership/source';
import { useReducer } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, ConfirmDialog, DialogFooter, SideSheet, Spinner } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { createChannels, fetchChannel, updateChannel } from '../api/channels.ts';
import {
  type ChannelForm,
  channelFormOf,
  channelFormReducer,
  channelInputOf,
  initialChannelFormState,
  newChannelForm,
} from '../channel-form.schema.ts';
import { checkChannelForm, endsWithV1 } from '../validation.ts';
import { AdvancedSection } from './channel-form/advanced-section.tsx';
import { BasicsSection } from './channel-form/basics-section.tsx';
import { LimitsSection } from './channel-form/limits-section.tsx';
import { ModelsSection } from './channel-form/models-section.tsx';
import { RoutingSection } from './channel-form/routing-section.tsx';
import type { KeyOptions } from './key-mode-fields.tsx';
import { ManagedBadge, resourceName } from './managed-badge.tsx';

/** What the drawer opens on: a new channel or an existing one. */
export type DrawerTarget = { mode: 'create' } | { mode: 'edit'; id: number };

export interface ChannelDrawerProps {
  target: DrawerTarget;
  groups: string[];
  onClose: () => void;
  onSaved: () => void;
}

/** Loads the channel for edit/copy, then shows the form. */
export function ChannelDrawer(props: ChannelDrawerProps) {
  const { t } = useTranslation('channels');
  const id = props.target.mode === 'create' ? null : props.target.id;
  const channel = useQuery({
    queryKey: ['channel', id],
    queryFn: () => fetchChannel(id as number),
    enabled: id !== null,
    gcTime: 0,
  });
  const title = props.target.mode === 'edit' ? t('drawer.editTitle') : t('drawer.createTitle');
  if (id !== null && !channel.data) {
    return (
      <SideSheet open onClose={props.onClose} title={title} wide testId="channel-sheet">
        {channel.isError ? (
          <p role="alert" className="text-red-600">
            {t('error.notFound')}
          </p>
        ) : (
          <div className="flex justify-center py-10 text-blue-600">
            <Spinner />
          </div>
        )}
      </SideSheet>
    );
  }
  const managedBy = props.target.mode === 'edit' ? (channel.data?.managed_by ?? null) : null;
  return (
    <ChannelFormSheet
      {...props}
      title={managedBy ? t('managed.viewTitle') : title}
      initial={channel.data ? channelFormOf(channel.data) : newChannelForm()}
      editId={id}
      managedBy={managedBy}
      isMultiKey={props.target.mode === 'edit' && channel.data?.channel_info?.is_multi_key === true}
      multiKeyMode={channel.data?.channel_info?.multi_key_mode}
    />
  );
}

function ChannelFormSheet({
  title,
  initial,
  editId,
  groups,
  onClose,
  onSaved,
  managedBy,
  isMultiKey,
  multiKeyMode,
}: ChannelDrawerProps & {
  title: string;
  initial: ChannelForm;
  editId: number | null;
  /** Set when Kubernetes owns the channel: every field is read-only and nothing is submitted. */
  managedBy: ResourceSource | null;
  /** The channel being edited holds several keys (docs/adr/0027), picked this way. */
  isMultiKey: boolean;
  multiKeyMode: KeyOptions['multiKeyMode'] | undefined;
}) {
  const { t } = useTranslation('channels');
  const isEdit = editId !== null;
  const [state, dispatch] = useReducer(channelFormReducer, undefined, () =>
    initialChannelFormState(initial, { isEdit, multiKeyMode }),
  );
  const sectionProps = { state, dispatch };

  const submit = async (confirmed: boolean) => {
    const refuse = (problem: string) => {
      dispatch({ type: 'refuse', problem });
      toast.error(t(problem));
    };
    const { form, keyOptions } = state;
    // the form's own checks come before the /v1 question, the limits after it
    const problem = checkChannelForm(form, isEdit);
    if (problem) return refuse(problem);
    if (!confirmed && endsWithV1(form.base_url)) {
      dispatch({ type: 'confirmV1', open: true });
      return;
    }
    const checked = channelInputOf(form, { isEdit, isMultiKey, keyOptions });
    if (!checked.ok) return refuse(checked.error);
    dispatch({ type: 'busy', busy: true });
    try {
      if (isEdit) {
        await updateChannel({ ...checked.input, id: editId });
        toast.success(t('done.updated'));
      } else {
        const created = await createChannels(checked.input);
        toast.success(t('done.created', { count: created.length }));
      }
      onSaved();
      onClose();
    } catch {
      // shown by the request client; the drawer stays open with the input
    } finally {
      dispatch({ type: 'busy', busy: false });
    }
  };

  return (
    <SideSheet
      open
      wide
      testId="channel-sheet"
      onClose={onClose}
      title={title}
      footer={
        managedBy ? (
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.close')}
          </Button>
        ) : (
          <DialogFooter
            onCancel={onClose}
            onOk={() => void submit(false)}
            busy={state.busy}
            okText={t('common:common.submit')}
          />
        )
      }
    >
      {managedBy ? (
        <p role="note" className="mb-4 rounded border border-blue-200 bg-blue-50 p-3 text-sm text-blue-900">
          <ManagedBadge source={managedBy} />{' '}
          {t('managed.notice', { resource: resourceName(managedBy), generation: managedBy.generation })}
        </p>
      ) : null}
      <fieldset disabled={managedBy !== null} className="contents">
        <form
          className="flex flex-col gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            void submit(false);
          }}
        >
          <BasicsSection
            {...sectionProps}
            editId={editId}
            isMultiKey={isMultiKey}
            readOnly={managedBy !== null}
          />
          <ModelsSection {...sectionProps} editId={editId} />
          <RoutingSection {...sectionProps} groups={groups} />
          <LimitsSection {...sectionProps} />
          <AdvancedSection {...sectionProps} />
          {state.problem ? (
            <p role="alert" className="text-sm text-red-600">
              {t(state.problem)}
            </p>
          ) : null}
        </form>
      </fieldset>
      <ConfirmDialog
        open={state.confirmingV1}
        title={t('drawer.v1Title')}
        message={t('field.baseUrlV1')}
        onCancel={() => dispatch({ type: 'confirmV1', open: false })}
        onConfirm={() => {
          dispatch({ type: 'confirmV1', open: false });
          void submit(true);
        }}
      />
    </SideSheet>
  );
}

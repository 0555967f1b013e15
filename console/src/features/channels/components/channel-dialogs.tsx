import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Input, Modal, Select, Textarea } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { type ChannelTagView, type ChannelView, editTag, tagChannels } from '../api/channels.ts';
import { buildTagEdit, CHANNEL_COLUMNS, type ChannelColumn, splitList } from '../validation.ts';

/** Puts the selected channels under one tag. */
export function BatchTagDialog({
  ids,
  onClose,
  onDone,
}: {
  ids: number[];
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation('channels');
  const [tag, setTag] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!tag.trim()) {
      setError(t('error.tagEmpty'));
      return;
    }
    setBusy(true);
    try {
      const count = await tagChannels(ids, tag.trim());
      toast.success(t('done.tagged', { count }));
      onDone();
      onClose();
    } catch {
      // the request client has shown the message
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open
      onClose={onClose}
      title={t('batchTag.title')}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button loading={busy} onClick={() => void submit()}>
            {t('common:common.confirm')}
          </Button>
        </>
      }
    >
      <p className="mb-3 text-gray-600 dark:text-gray-400">{t('batchTag.hint', { count: ids.length })}</p>
      <Input
        label={t('field.tag')}
        value={tag}
        error={error}
        onChange={(e) => {
          setTag(e.target.value);
          setError(null);
        }}
      />
    </Modal>
  );
}

/** Edits every channel of a tag at once; blank fields change nothing. */
export function TagEditDialog({
  tag,
  groups,
  onClose,
  onDone,
}: {
  tag: ChannelTagView;
  groups: string[];
  onClose: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation('channels');
  const [fields, setFields] = useState({
    newTag: tag.tag,
    modelMapping: '',
    models: '',
    groups: '',
    priority: '',
    weight: '',
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof fields) => (e: { target: { value: string } }) => {
    setFields((f) => ({ ...f, [key]: e.target.value }));
    setError(null);
  };
  const submit = async () => {
    const built = buildTagEdit(tag.tag, fields);
    if ('error' in built) {
      setError(t(built.error));
      if (built.error === 'error.noChanges') toast.warning(t(built.error));
      return;
    }
    setBusy(true);
    try {
      const count = await editTag(built.edit);
      toast.success(t('done.tagEdited', { count }));
      onDone();
      onClose();
    } catch {
      // shown by the request client
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open
      size="lg"
      onClose={onClose}
      title={t('tagEdit.title', { tag: tag.tag })}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button loading={busy} onClick={() => void submit()}>
            {t('common:common.save')}
          </Button>
        </>
      }
    >
      <div className="flex max-h-[70vh] flex-col gap-3 overflow-y-auto">
        <p className="text-gray-600 dark:text-gray-400">{t('tagEdit.hint')}</p>
        <Input
          label={t('tagEdit.newTag')}
          hint={t('tagEdit.newTagHint')}
          value={fields.newTag}
          onChange={set('newTag')}
        />
        <Input
          label={t('field.models')}
          hint={t('tagEdit.modelsHint', { current: tag.models })}
          value={fields.models}
          onChange={set('models')}
        />
        <Input
          label={t('field.groups')}
          hint={t('tagEdit.groupsHint', { groups: groups.join(', ') })}
          value={fields.groups}
          onChange={set('groups')}
        />
        <Textarea
          label={t('field.modelMapping')}
          placeholder={t('field.modelMappingPlaceholder')}
          value={fields.modelMapping}
          onChange={set('modelMapping')}
        />
        <div className="grid grid-cols-2 gap-3">
          <Input label={t('field.priority')} value={fields.priority} onChange={set('priority')} />
          <Input label={t('field.weight')} value={fields.weight} onChange={set('weight')} />
        </div>
        {error ? (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </Modal>
  );
}

/** Which columns the table shows; the page remembers the choice. */
export function ColumnSettingsDialog({
  columns,
  onClose,
  onSave,
}: {
  columns: Record<ChannelColumn, boolean>;
  onClose: () => void;
  onSave: (columns: Record<ChannelColumn, boolean>) => void;
}) {
  const { t } = useTranslation('channels');
  const [draft, setDraft] = useState(columns);
  const reset = () => setDraft(Object.fromEntries(CHANNEL_COLUMNS.map((c) => [c, true])) as typeof draft);
  return (
    <Modal
      open
      onClose={onClose}
      title={t('columns.title')}
      footer={
        <>
          <Button variant="ghost" onClick={reset}>
            {t('columns.reset')}
          </Button>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button
            onClick={() => {
              onSave(draft);
              onClose();
            }}
          >
            {t('common:common.save')}
          </Button>
        </>
      }
    >
      <div className="grid grid-cols-2 gap-2">
        {CHANNEL_COLUMNS.map((c) => (
          <label key={c} className="flex items-center gap-2">
            <input
              type="checkbox"
              checked={draft[c]}
              onChange={(e) => setDraft((d) => ({ ...d, [c]: e.target.checked }))}
            />
            {t(`col.${c}`)}
          </label>
        ))}
      </div>
    </Modal>
  );
}

/** Picks one of the channel's models for a test. */
export function TestModelDialog({
  channel,
  onClose,
  onTest,
}: {
  channel: ChannelView;
  onClose: () => void;
  onTest: (model: string) => void;
}) {
  const { t } = useTranslation('channels');
  const models = splitList(channel.models);
  const [model, setModel] = useState(channel.test_model || models[0] || '');
  return (
    <Modal
      open
      onClose={onClose}
      title={t('testModel.title', { name: channel.name })}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            {t('common:common.cancel')}
          </Button>
          <Button
            onClick={() => {
              onTest(model);
              onClose();
            }}
          >
            {t('action.test')}
          </Button>
        </>
      }
    >
      <Select
        label={t('testModel.model')}
        value={model}
        onChange={(e) => setModel(e.target.value)}
        options={models.map((m) => ({ value: m, label: m }))}
      />
    </Modal>
  );
}

import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, DialogFooter, Input, Modal, Switch, Textarea } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import {
  type ChannelTagView,
  type ChannelView,
  copyChannel,
  editTag,
  type TestOutcome,
  tagChannels,
  testChannel,
} from '../api/channels.ts';
import { buildTagEdit, MODEL_TEST_MIN_COLUMN, responseTimeColor, splitList } from '../validation.ts';

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
      footer={<DialogFooter onCancel={onClose} onOk={() => void submit()} busy={busy} />}
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
        <DialogFooter
          onCancel={onClose}
          onOk={() => void submit()}
          busy={busy}
          okText={t('common:common.save')}
        />
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

/** What one model's test answered, or that it is running. */
type ModelResult = { kind: 'running' } | TestOutcome;

const resultClass = {
  gray: 'text-gray-500',
  green: 'text-green-700 dark:text-green-400',
  lime: 'text-lime-700 dark:text-lime-400',
  yellow: 'text-yellow-700 dark:text-yellow-400',
  red: 'text-red-700 dark:text-red-400',
} as const;

/**
 * Tests a channel with one of its models, or with each of them in turn: a grid of the models (columns at least
 * 200 px), each with its own Test button and result.
 */
export function ModelTestDialog({ channel, onClose }: { channel: ChannelView; onClose: () => void }) {
  const { t } = useTranslation('channels');
  const models = splitList(channel.models);
  const [filter, setFilter] = useState('');
  const [results, setResults] = useState<Record<string, ModelResult>>({});
  const [batch, setBatch] = useState<{ done: number; total: number } | null>(null);
  const stop = useRef(false);
  const shown = models.filter((m) => m.toLowerCase().includes(filter.trim().toLowerCase()));

  const testOne = async (model: string) => {
    setResults((r) => ({ ...r, [model]: { kind: 'running' } }));
    const outcome = await testChannel(channel.id, model);
    setResults((r) => ({ ...r, [model]: outcome }));
    return outcome;
  };

  const testAll = async () => {
    stop.current = false;
    const list = shown;
    setBatch({ done: 0, total: list.length });
    let failed = 0;
    for (const [i, model] of list.entries()) {
      if (stop.current) break;
      const outcome = await testOne(model);
      if (outcome.kind !== 'ok') failed++;
      setBatch({ done: i + 1, total: list.length });
      if (outcome.kind === 'unavailable') break;
    }
    setBatch(null);
    if (!stop.current) toast.info(t('testModel.batchDone', { count: list.length, failed }));
  };

  const close = () => {
    stop.current = true;
    onClose();
  };

  return (
    <Modal
      open
      size="lg"
      onClose={close}
      title={t('testModel.title', { name: channel.name })}
      footer={
        <DialogFooter
          onCancel={close}
          onOk={() => void testAll()}
          busy={batch !== null}
          disabled={shown.length === 0}
          okText={batch ? t('testModel.batchRunning', batch) : t('testModel.batch', { count: shown.length })}
          cancelText={t('common:common.close')}
        />
      }
    >
      <div className="flex flex-col gap-3">
        <Input label={t('testModel.filter')} value={filter} onChange={(e) => setFilter(e.target.value)} />
        {models.length === 0 ? <p className="text-gray-500">{t('testModel.none')}</p> : null}
        <ul
          aria-label={t('testModel.models')}
          className="grid max-h-[55vh] gap-2 overflow-y-auto"
          style={{
            gridTemplateColumns: `repeat(auto-fill, minmax(min(${MODEL_TEST_MIN_COLUMN}px, 100%), 1fr))`,
          }}
        >
          {shown.map((model) => {
            const result = results[model];
            return (
              <li
                key={model}
                data-testid={`model-test-${model}`}
                className="flex flex-col gap-1 rounded border border-gray-200 p-2 dark:border-gray-700"
              >
                <span className="break-all font-medium">
                  {model}
                  {model === channel.test_model ? (
                    <span className="ml-1 text-xs text-gray-500">{t('testModel.default')}</span>
                  ) : null}
                </span>
                <div className="flex items-center justify-between gap-2">
                  <ModelResultText result={result} />
                  <Button
                    size="sm"
                    variant="secondary"
                    loading={result?.kind === 'running'}
                    disabled={batch !== null}
                    aria-label={t('testModel.testOf', { model })}
                    onClick={() => void testOne(model)}
                  >
                    {t('action.test')}
                  </Button>
                </div>
              </li>
            );
          })}
        </ul>
      </div>
    </Modal>
  );
}

function ModelResultText({ result }: { result: ModelResult | undefined }) {
  const { t } = useTranslation('channels');
  if (!result || result.kind === 'running') return <span className="text-xs text-gray-500">-</span>;
  if (result.kind === 'unavailable')
    return <span className="text-xs text-gray-500">{t('test.unavailable')}</span>;
  if (result.kind === 'failed')
    return (
      <span className="line-clamp-2 text-xs text-red-700 dark:text-red-400" title={result.message}>
        {t('testModel.failed', { message: result.message })}
      </span>
    );
  const color = responseTimeColor(Math.max(1, Math.round(result.seconds * 1000)));
  return (
    <span data-color={color} className={`text-xs font-medium ${resultClass[color]}`}>
      {t('time.seconds', { seconds: result.seconds.toFixed(2) })}
    </span>
  );
}

/** Copies a channel (key included) under a new name; the copy starts without usage history. */
export function CopyChannelDialog({
  channel,
  onClose,
  onDone,
}: {
  channel: ChannelView;
  onClose: () => void;
  onDone: (copy: ChannelView) => void;
}) {
  const { t } = useTranslation('channels');
  const [suffix, setSuffix] = useState(t('copy.defaultSuffix'));
  const [resetBalance, setResetBalance] = useState(true);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    try {
      const copy = await copyChannel(channel.id, { suffix, reset_balance: resetBalance });
      toast.success(t('copy.done', { name: copy.name }));
      onDone(copy);
      onClose();
    } catch (error) {
      toast.error(`${t('copy.failed')}${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      open
      onClose={onClose}
      title={t('copy.title', { name: channel.name })}
      footer={
        <DialogFooter onCancel={onClose} onOk={() => void submit()} busy={busy} okText={t('action.copy')} />
      }
    >
      <div className="flex flex-col gap-3">
        <p className="text-gray-600 dark:text-gray-400">{t('copy.hint')}</p>
        <Input
          label={t('copy.suffix')}
          hint={t('copy.preview', { name: `${channel.name}${suffix}` })}
          maxLength={64}
          value={suffix}
          onChange={(e) => setSuffix(e.target.value)}
        />
        <Switch checked={resetBalance} onChange={setResetBalance} label={t('copy.resetBalance')} />
      </div>
    </Modal>
  );
}

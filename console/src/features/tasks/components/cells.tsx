import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button, Modal, Tag } from '../../../components/ui/index.ts';
import { channelColor, formatSeconds, parseProgress, spentColor } from '../rules.ts';

/** Long text cut to one line; the whole text shows on hover and, on click, in a large dialog. */
export function ClippedText({ text, onOpen }: { text: string; onOpen: (text: string) => void }) {
  if (!text) return <span className="text-gray-400">-</span>;
  return (
    <button
      type="button"
      title={text}
      className="block max-w-[12rem] truncate text-left hover:text-blue-600 hover:underline"
      onClick={() => onOpen(text)}
    >
      {text}
    </button>
  );
}

/** A large read-only text (a prompt, a failure reason, a whole record). */
export function TextDialog({
  title,
  text,
  onClose,
}: {
  title: string;
  text: string | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  return (
    <Modal
      open={text !== null}
      onClose={onClose}
      title={title}
      size="lg"
      footer={
        <Button variant="secondary" onClick={onClose}>
          {t('common.close')}
        </Button>
      }
    >
      <pre className="max-h-[60vh] overflow-auto whitespace-pre-wrap break-all rounded bg-gray-50 p-3 font-mono text-xs dark:bg-gray-800">
        {text}
      </pre>
    </Modal>
  );
}

/** Time spent as a tag: green, red above 60 s; a dash while the task is not finished. */
export function SpentTag({ seconds }: { seconds: number | null }) {
  const { t } = useTranslation('tasks');
  if (seconds === null) return <span className="text-gray-400">-</span>;
  return <Tag color={spentColor(seconds)}>{t('seconds', { seconds: formatSeconds(seconds) })}</Tag>;
}

/** The channel as a coloured tag; clicking copies its id. */
export function ChannelTag({ id, onCopy }: { id: number | undefined; onCopy: (text: string) => void }) {
  const { t } = useTranslation('tasks');
  if (!id) return <span className="text-gray-400">-</span>;
  return (
    <button type="button" title={t('copy.channel')} onClick={() => onCopy(String(id))}>
      <Tag color={channelColor(id)}>{id}</Tag>
    </button>
  );
}

/** A horizontal progress bar; a failed task's bar is in the warning colour. */
export function ProgressBar({ progress, failed }: { progress: string; failed: boolean }) {
  const value = parseProgress(progress);
  if (value === null) return progress ? <span>{progress}</span> : <span className="text-gray-400">-</span>;
  const color = failed ? 'bg-orange-500' : value >= 100 ? 'bg-green-500' : 'bg-blue-500';
  return (
    <div className="flex min-w-28 items-center gap-2">
      <div
        role="progressbar"
        aria-valuenow={value}
        aria-valuemin={0}
        aria-valuemax={100}
        data-failed={failed || undefined}
        className="h-2 w-20 overflow-hidden rounded-full bg-gray-200 dark:bg-gray-700"
      >
        <div className={`h-full ${color}`} style={{ width: `${value}%` }} />
      </div>
      <span className="text-xs tabular-nums">{progress}</span>
    </div>
  );
}

/** A ring for a numeric progress, the text itself otherwise. */
export function ProgressRing({ progress, failed }: { progress: string; failed: boolean }) {
  const value = parseProgress(progress);
  if (value === null) return progress ? <Tag>{progress}</Tag> : <span className="text-gray-400">-</span>;
  const radius = 14;
  const circumference = 2 * Math.PI * radius;
  const stroke = failed ? 'stroke-orange-500' : value >= 100 ? 'stroke-green-500' : 'stroke-blue-500';
  return (
    <span className="inline-flex items-center gap-1">
      <svg
        viewBox="0 0 36 36"
        className="h-9 w-9 -rotate-90"
        role="progressbar"
        aria-valuenow={value}
        aria-valuemin={0}
        aria-valuemax={100}
      >
        <circle
          cx="18"
          cy="18"
          r={radius}
          fill="none"
          strokeWidth="4"
          className="stroke-gray-200 dark:stroke-gray-700"
        />
        <circle
          cx="18"
          cy="18"
          r={radius}
          fill="none"
          strokeWidth="4"
          strokeLinecap="round"
          className={stroke}
          strokeDasharray={circumference}
          strokeDashoffset={circumference * (1 - value / 100)}
        />
      </svg>
      <span className="text-xs tabular-nums">{Math.round(value)}%</span>
    </span>
  );
}

/** A small preview of a result image; clicking opens it large in a viewer. */
export function ImagePreview({ url, alt }: { url: string; alt: string }) {
  const { t } = useTranslation('tasks');
  const [open, setOpen] = useState(false);
  const [broken, setBroken] = useState(false);
  if (!url) return <span className="text-gray-400">-</span>;
  return (
    <>
      <button
        type="button"
        aria-label={t('image.open')}
        className="block h-10 w-10 overflow-hidden rounded border border-gray-200 bg-gray-100 text-xs dark:border-gray-700 dark:bg-gray-800"
        onClick={() => setOpen(true)}
      >
        {broken ? (
          <span className="text-gray-500">{t('image.broken')}</span>
        ) : (
          <img
            src={url}
            alt={alt}
            loading="lazy"
            className="h-full w-full object-cover"
            onError={() => setBroken(true)}
          />
        )}
      </button>
      <Modal
        open={open}
        onClose={() => setOpen(false)}
        title={t('image.title')}
        size="lg"
        footer={
          <>
            <a
              href={url}
              target="_blank"
              rel="noreferrer noopener"
              className="inline-flex min-h-10 items-center px-4 text-sm text-blue-600 hover:underline"
            >
              {t('image.original')}
            </a>
            <Button variant="secondary" onClick={() => setOpen(false)}>
              {t('common:common.close')}
            </Button>
          </>
        }
      >
        <img src={url} alt={alt} className="mx-auto max-h-[70vh] w-auto max-w-full rounded" />
      </Modal>
    </>
  );
}

/** Links to a drawing's result videos (Plus video tasks), opened in a new tab. */
export function VideoLinks({ urls }: { urls: string[] }) {
  const { t } = useTranslation('tasks');
  if (urls.length === 0) return null;
  return (
    <span className="flex flex-wrap gap-x-2">
      {urls.map((url, index) => (
        <a
          key={url}
          href={url}
          target="_blank"
          rel="noreferrer noopener"
          className="text-sm text-blue-600 hover:underline"
        >
          {urls.length === 1 ? t('video.open') : t('video.openNth', { n: index + 1 })}
        </a>
      ))}
    </span>
  );
}

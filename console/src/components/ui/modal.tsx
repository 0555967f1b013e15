import { Dialog, DialogPanel, DialogTitle } from '@headlessui/react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from './button.tsx';
import { cx } from './cx.ts';

export interface ModalProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children?: ReactNode;
  footer?: ReactNode;
  size?: 'sm' | 'md' | 'lg';
}

export function Modal({ open, onClose, title, children, footer, size = 'md' }: ModalProps) {
  const width = size === 'sm' ? 'max-w-sm' : size === 'lg' ? 'max-w-3xl' : 'max-w-lg';
  return (
    <Dialog open={open} onClose={onClose} className="relative z-50">
      <div className="fixed inset-0 bg-black/40" aria-hidden="true" />
      <div className="fixed inset-0 flex items-center justify-center p-4">
        <DialogPanel className={cx('w-full rounded-lg bg-white p-5 shadow-xl dark:bg-gray-900', width)}>
          <DialogTitle className="text-lg font-semibold">{title}</DialogTitle>
          <div className="mt-3 text-sm">{children}</div>
          {footer ? <div className="mt-5 flex justify-end gap-2">{footer}</div> : null}
        </DialogPanel>
      </div>
    </Dialog>
  );
}

export interface ConfirmDialogProps {
  open: boolean;
  title: ReactNode;
  message?: ReactNode;
  confirmText?: string;
  danger?: boolean;
  loading?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export interface DialogFooterProps {
  onCancel: () => void;
  onOk: () => void;
  /** Default: Confirm. */
  okText?: ReactNode;
  /** Default: Cancel. */
  cancelText?: ReactNode;
  busy?: boolean;
  disabled?: boolean;
  /** A red OK button, for destructive actions. */
  danger?: boolean;
}

/** The usual footer of a dialog: Cancel, then the action (with a spinner while it runs). */
export function DialogFooter({
  onCancel,
  onOk,
  okText,
  cancelText,
  busy,
  disabled,
  danger,
}: DialogFooterProps) {
  const { t } = useTranslation();
  return (
    <>
      <Button variant="secondary" onClick={onCancel}>
        {cancelText ?? t('common.cancel')}
      </Button>
      <Button variant={danger ? 'danger' : 'primary'} loading={busy} disabled={disabled} onClick={onOk}>
        {okText ?? t('common.confirm')}
      </Button>
    </>
  );
}

/** Asks before a consequential action; the confirm button is red for destructive ones. */
export function ConfirmDialog({
  open,
  title,
  message,
  confirmText,
  danger,
  loading,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  return (
    <Modal
      open={open}
      onClose={onCancel}
      title={title}
      size="sm"
      footer={
        <DialogFooter
          onCancel={onCancel}
          onOk={onConfirm}
          okText={confirmText}
          busy={loading}
          danger={danger}
        />
      }
    >
      {message}
    </Modal>
  );
}

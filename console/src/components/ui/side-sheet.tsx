import { Dialog, DialogPanel, DialogTitle } from '@headlessui/react';
import type { FormEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from './button.tsx';
import { Spinner } from './spinner.tsx';

export interface SideSheetProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children?: ReactNode;
  footer?: ReactNode;
  /** 600 px instead of 36rem (the channel drawer, spec 02 section 9). */
  wide?: boolean;
  testId?: string;
}

/** A panel sliding in from the right; full width on phones. */
export function SideSheet({ open, onClose, title, children, footer, wide, testId }: SideSheetProps) {
  const { t } = useTranslation();
  return (
    <Dialog open={open} onClose={onClose} className="relative z-50">
      <div className="fixed inset-0 bg-black/40" aria-hidden="true" />
      <div className={`fixed inset-y-0 right-0 flex w-full ${wide ? 'sm:w-[600px]' : 'max-w-xl'}`}>
        <DialogPanel
          data-testid={testId}
          className="flex w-full flex-col bg-white shadow-xl dark:bg-gray-900"
        >
          <div className="flex items-center justify-between border-b border-gray-200 px-5 py-4 dark:border-gray-700">
            <DialogTitle className="text-lg font-semibold">{title}</DialogTitle>
            <button
              type="button"
              onClick={onClose}
              aria-label={t('common.close')}
              className="rounded p-1 hover:bg-gray-100 dark:hover:bg-gray-800"
            >
              ✕
            </button>
          </div>
          <div className="flex-1 overflow-y-auto px-5 py-4">{children}</div>
          {footer ? (
            <div className="flex justify-end gap-2 border-t border-gray-200 px-5 py-3 dark:border-gray-700">
              {footer}
            </div>
          ) : null}
        </DialogPanel>
      </div>
    </Dialog>
  );
}

export interface FormSheetProps {
  onClose: () => void;
  title: ReactNode;
  /** The id of the form, tying the footer's submit button to it. */
  formId: string;
  onSubmit: (e: FormEvent) => void;
  /** The record being edited is still loading: a spinner instead of the form. */
  loading?: boolean;
  saving: boolean;
  cancelLabel: string;
  submitLabel: string;
  children: ReactNode;
}

/** A side sheet holding one form: Cancel and Submit in the footer, a spinner while the record loads. */
export function FormSheet(props: FormSheetProps) {
  return (
    <SideSheet
      open
      onClose={props.onClose}
      title={props.title}
      footer={
        <>
          <Button variant="secondary" onClick={props.onClose}>
            {props.cancelLabel}
          </Button>
          <Button type="submit" form={props.formId} loading={props.saving}>
            {props.submitLabel}
          </Button>
        </>
      }
    >
      {props.loading ? (
        <div className="flex justify-center py-8 text-blue-600">
          <Spinner />
        </div>
      ) : (
        <form id={props.formId} noValidate onSubmit={props.onSubmit} className="flex flex-col gap-4">
          {props.children}
        </form>
      )}
    </SideSheet>
  );
}

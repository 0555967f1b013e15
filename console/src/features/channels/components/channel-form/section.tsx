import type { Dispatch, ReactNode } from 'react';
import type { ChannelForm, ChannelFormAction, ChannelFormState } from '../../channel-form.schema.ts';

/** What every section of the channel form gets: the drawer's one state and the way to change it. */
export interface SectionProps {
  state: ChannelFormState;
  dispatch: Dispatch<ChannelFormAction>;
}

/** A change to some fields of the form (it clears the message of a refused submit). */
export const editOf =
  (dispatch: Dispatch<ChannelFormAction>) =>
  (patch: Partial<ChannelForm>): void =>
    dispatch({ type: 'edit', patch });

/** One titled part of the form. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <fieldset className="flex flex-col gap-3 border-t border-gray-200 pt-4 dark:border-gray-700">
      <legend className="pr-2 text-sm font-semibold text-gray-500">{title}</legend>
      {children}
    </fieldset>
  );
}

import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useColumnChoice } from './column-choice.tsx';
import { useListAction } from './list-action.ts';

const KEY = 'fruit-table-columns';

/** A table's column settings as a page uses them: a button that opens the dialog, the shown columns as text. */
function Columns({ admin }: { admin: boolean }) {
  const columns = useColumnChoice({
    storageKey: KEY,
    columns: ['name', 'price', 'supplier'] as const,
    allowed: (c) => admin || c !== 'supplier',
    title: 'Columns',
    label: (c) => `col ${c}`,
    resetLabel: 'All columns',
  });
  return (
    <>
      <button type="button" onClick={columns.open}>
        settings
      </button>
      <output>{columns.shown.join(',')}</output>
      {columns.dialog}
    </>
  );
}

describe('useColumnChoice', () => {
  beforeEach(() => localStorage.clear());

  it('remembers the columns turned off, and reset turns on only those the viewer may see', async () => {
    const user = userEvent.setup();
    const first = render(<Columns admin={false} />);
    expect(screen.getByRole('status').textContent).toBe('name,price');
    await user.click(screen.getByRole('button', { name: 'settings' }));
    expect(screen.queryByLabelText('col supplier')).toBeNull();
    await user.click(screen.getByLabelText('col price'));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByRole('status').textContent).toBe('name');
    expect(JSON.parse(localStorage.getItem(KEY) ?? '{}')).toEqual({
      name: true,
      price: false,
      supplier: false,
    });
    first.unmount();

    render(<Columns admin={false} />);
    expect(screen.getByRole('status').textContent).toBe('name');
    await user.click(screen.getByRole('button', { name: 'settings' }));
    await user.click(screen.getByRole('button', { name: 'All columns' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByRole('status').textContent).toBe('name,price');
  });
});

function Action({
  call,
  refresh,
  refreshOnFailure,
}: {
  call: () => Promise<unknown>;
  refresh: () => void;
  refreshOnFailure?: boolean;
}) {
  const action = useListAction(refresh);
  return (
    <button type="button" onClick={() => void action.run(call, { busyKey: 'row', refreshOnFailure })}>
      {action.busy.has('row') ? 'busy' : 'run'}
    </button>
  );
}

describe('useListAction', () => {
  it('refreshes the list after a success, and after a failure only when asked', async () => {
    const user = userEvent.setup();
    const refresh = vi.fn();
    const failing = () => Promise.reject(new Error('refused'));
    const { rerender } = render(<Action call={failing} refresh={refresh} />);
    await user.click(screen.getByRole('button', { name: 'run' }));
    await screen.findByRole('button', { name: 'run' });
    expect(refresh).not.toHaveBeenCalled();

    rerender(<Action call={failing} refresh={refresh} refreshOnFailure />);
    await user.click(screen.getByRole('button', { name: 'run' }));
    await vi.waitFor(() => expect(refresh).toHaveBeenCalledTimes(1));

    let finish: (value: unknown) => void = () => undefined;
    rerender(<Action call={() => new Promise((resolve) => (finish = resolve))} refresh={refresh} />);
    await user.click(screen.getByRole('button', { name: 'run' }));
    expect(await screen.findByRole('button', { name: 'busy' })).toBeDefined();
    finish(undefined);
    await screen.findByRole('button', { name: 'run' });
    expect(refresh).toHaveBeenCalledTimes(2);
  });
});

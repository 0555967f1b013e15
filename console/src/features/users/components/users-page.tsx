import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FilterBar,
  ListPage,
  type TableColumn,
  useConfirm,
  useFilterDraft,
  useListPage,
} from '../../../components/data-table/index.ts';
import { Button, Input, Select, Tag } from '../../../components/ui/index.ts';
import { formatQuota } from '../../../lib/format.ts';
import { useSessionUser } from '../../../lib/session.ts';
import { useQuotaDisplay } from '../../../lib/status.ts';
import { toast } from '../../../lib/toast.ts';
import {
  fetchGroups,
  fetchUsers,
  type ManageAction,
  manageUser,
  type UserRow,
  usersQueryKey,
} from '../api/users.ts';
import { allowedActions, roleName, statusName } from '../rules.ts';
import { usersSearch } from '../search.ts';
import { AddUserSheet } from './add-user-sheet.tsx';
import { EditUserSheet } from './edit-user-sheet.tsx';

const roleColor = { common: 'gray', admin: 'blue', root: 'orange', unknown: 'red' } as const;
const statusColor = { active: 'green', banned: 'red', other: 'gray', unknown: 'gray' } as const;

/**
 * Manage users (admin): search, paged table, add and edit sheets, and the manage actions with confirmations.
 * `editId` opens the edit sheet at once (the /user/edit/{id} address); `onEditClosed` runs when it closes.
 */
export function UsersPage({ editId, onEditClosed }: { editId?: number; onEditClosed?: () => void } = {}) {
  const { t } = useTranslation('users');
  const actor = useSessionUser();
  const queryClient = useQueryClient();
  const list = useListPage(usersSearch, 'users');
  const filter = useFilterDraft({ keyword: list.search.keyword, group: list.search.group });
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<number | null>(editId ?? null);
  const confirm = useConfirm();

  const query = { ...list.search, pageSize: list.pageSize };
  const users = useQuery({
    queryKey: usersQueryKey(query),
    queryFn: () => fetchUsers(query),
    placeholderData: keepPreviousData,
  });
  const groups = useQuery({ queryKey: ['groups'], queryFn: fetchGroups });
  const display = useQuotaDisplay();

  const runAction = async (pending: { user: UserRow; action: ManageAction }) => {
    const result = await manageUser(pending.user.id, pending.action);
    toast.success(t(`done.${pending.action}`));
    // the row takes the role and status the server answered
    queryClient.setQueryData(usersQueryKey(query), (old: typeof users.data) =>
      old
        ? {
            ...old,
            items: old.items.map((u) =>
              u.id === pending.user.id
                ? {
                    ...u,
                    ...result,
                    ...(pending.action === 'delete' ? { DeletedAt: new Date().toISOString() } : {}),
                  }
                : u,
            ),
          }
        : old,
    );
  };
  const askAction = (user: UserRow, action: ManageAction) =>
    confirm.ask({
      danger: action === 'delete' || action === 'disable',
      title: t(`confirm.${action}`, { username: user.username }),
      run: () => runAction({ user, action }),
    });

  const columns: TableColumn<UserRow>[] = [
    { accessorKey: 'id', header: 'ID' },
    {
      id: 'username',
      header: t('col.username'),
      cell: ({ row }) => (
        <span>
          {row.original.username}
          {row.original.display_name && row.original.display_name !== row.original.username ? (
            <span className="ml-1 text-gray-500">({row.original.display_name})</span>
          ) : null}
        </span>
      ),
    },
    { id: 'group', header: t('col.group'), cell: ({ row }) => <Tag>{row.original.group}</Tag> },
    {
      id: 'quota',
      header: t('col.quota'),
      cell: ({ row }) => (
        <span className="text-xs">
          {t('col.remaining')} {formatQuota(row.original.quota, display)} · {t('col.used')}{' '}
          {formatQuota(row.original.used_quota, display)} · {t('col.requests')} {row.original.request_count}
        </span>
      ),
    },
    {
      id: 'role',
      header: t('col.role'),
      cell: ({ row }) => {
        const name = roleName(row.original.role);
        return <Tag color={roleColor[name]}>{t(`role.${name}`)}</Tag>;
      },
    },
    {
      id: 'status',
      header: t('col.status'),
      cell: ({ row }) => {
        if (row.original.DeletedAt) return <Tag color="red">{t('status.deregistered')}</Tag>;
        const name = statusName(row.original.status);
        return <Tag color={statusColor[name]}>{t(`status.${name}`)}</Tag>;
      },
    },
    {
      id: 'actions',
      header: t('col.actions'),
      cell: ({ row }) => {
        const actions = allowedActions(actor?.role ?? 0, row.original);
        return (
          <div className="flex gap-1">
            {actions.map((action) => (
              <Button
                key={action}
                size="sm"
                variant={action === 'delete' ? 'danger' : 'secondary'}
                aria-label={`${t(`action.${action}`)} ${row.original.username}`}
                onClick={() =>
                  action === 'edit' ? setEditing(row.original.id) : askAction(row.original, action)
                }
              >
                {t(`action.${action}`)}
              </Button>
            ))}
          </div>
        );
      },
    },
  ];

  return (
    <ListPage
      title={t('title')}
      filters={
        <FilterBar
          onSubmit={() => list.apply(filter.draft)}
          submitLabel={t('search.submit')}
          actions={
            <Button variant="secondary" onClick={() => setAdding(true)}>
              {t('add.open')}
            </Button>
          }
        >
          <div className="w-full sm:w-72">
            <Input
              label={t('search.keyword')}
              placeholder={t('search.placeholder')}
              {...filter.field('keyword')}
            />
          </div>
          <Select
            label={t('search.group')}
            {...filter.field('group')}
            options={[
              { value: '', label: t('search.allGroups') },
              ...(groups.data ?? []).map((g) => ({ value: g, label: g })),
            ]}
          />
        </FilterBar>
      }
      columns={columns}
      rows={users.data?.items ?? []}
      rowKey={(u) => u.id}
      loading={users.isFetching && !users.data}
      paging={list.paging(users.data?.total ?? 0)}
    >
      <AddUserSheet
        open={adding}
        onClose={() => setAdding(false)}
        onCreated={() => void queryClient.invalidateQueries({ queryKey: ['users'] })}
      />
      {editing !== null ? (
        <EditUserSheet
          id={editing}
          groups={groups.data ?? []}
          onClose={() => {
            setEditing(null);
            onEditClosed?.();
          }}
          onSaved={() => void queryClient.invalidateQueries({ queryKey: ['users'] })}
        />
      ) : null}
      {confirm.dialog}
    </ListPage>
  );
}

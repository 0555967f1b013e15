export { useColumnChoice } from './column-choice.tsx';
export {
  DataTable,
  DEFAULT_PAGE_SIZE,
  PAGE_SIZE_OPTIONS,
  type TableColumn,
  usePageSize,
} from './data-table.tsx';
export { useKeySet } from './key-set.ts';
export { useListAction } from './list-action.ts';
export { FilterBar, ListPage, type Paging, useListPage } from './list-page.tsx';
export {
  choiceParam,
  type ListSearch,
  listSearch,
  pageParam,
  type SearchOf,
  textParam,
  useFilterDraft,
  useListSearch,
} from './list-search.ts';
export { Pager } from './pager.tsx';
export { useRowSelection } from './row-selection.tsx';
export { type RowColumn, RowTable, TableState } from './row-table.tsx';
export { Toolbar } from './toolbar.tsx';
export { useConfirm, useSheet } from './use-confirm.tsx';

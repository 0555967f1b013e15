import { listSearch, textParam } from '../../components/data-table/index.ts';

/** The user list's URL: keyword, group and page. */
export const usersSearch = listSearch({ keyword: textParam, group: textParam });

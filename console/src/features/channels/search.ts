import { listSearch, textParam } from '../../components/data-table/index.ts';

/**
 * The channel list's URL: keyword, group, model and page. Sorting by id and tag mode are the administrator's
 * preferences, remembered in local storage, not filters of one list.
 */
export const channelsSearch = listSearch({ keyword: textParam, group: textParam, model: textParam });
